/**
 * One end-to-end run: a compressed-time spec, its plan, `gracegate lb-config` output behind a real
 * HAProxy, N pods, a load, one pod leaving (or all of them, one after another), and the measured
 * result. Every process is killed at the end, whatever happened.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planGateway, type Plan } from '../../../src/plan/plan-gateway';
import { resolveGatewaySpec } from '../../../src/schema/parse-spec';
import { runCli } from '../../support/run-cli';
import { Haproxy, type RequestLogLine } from './haproxy';
import { failuresByKind, LoadGenerator, sendOne, type LoadOptions, type Paths, type RequestRecord, type RequestSpec } from './load';
import { Pod } from './pod';
import { sleep } from './proc';
import type { MeasuredEvent, ScenarioResult, Termination } from './result';
import { gracegateTermination, naiveTermination, seedTermination, type TerminationLog } from './terminations';

export const STANDIN_PATHS: Paths = {
  slow: (ms) => `/slow?ms=${ms}`,
  stream: (chunks, intervalMs) => `/stream?chunks=${chunks}&intervalMs=${intervalMs}`,
};

export const BACKEND = 'gateway';

/** An HAProxy behaviour the spec can express, in the spec's own words (merged over the base). */
export type LbSetting = { label: string; lb: Record<string, unknown> };

/** Time compressed: checks every 300 ms (HAProxy's check timeout is inter: a loaded CI machine needs that much), requests of 50 ms - 2 s (FACTS.md §2 used inter 500, 50-3000 ms). */
const BASE_LB = { model: 'haproxy', inter: '300ms', fall: 2, rise: 2, retries: 3 };

export const LB_SETTINGS = {
  flushRedispatch: { label: 'shutdown-sessions + redispatch', lb: { onMarkedDown: 'shutdown-sessions', redispatch: true } },
  flushNoRedispatch: { label: 'shutdown-sessions, no redispatch', lb: { onMarkedDown: 'shutdown-sessions', redispatch: false } },
  noFlush: { label: 'no shutdown-sessions', lb: {} },
  disableOn404: { label: 'disable-on-404 + shutdown-sessions', lb: { disableOn404: true, onMarkedDown: 'shutdown-sessions' } },
} satisfies Record<string, LbSetting>;

/** The spec of the lab gateway: real planner, compressed numbers. */
export function labSpec(setting: LbSetting, replicas: number): Record<string, unknown> {
  return {
    apiVersion: 'gracegate.dev/v1alpha1',
    kind: 'GracefulGateway',
    metadata: { name: 'igw-lab', namespace: 'istio-ingress' },
    spec: {
      replicas,
      nodes: replicas,
      chart: { kind: 'istio-gateway', version: '1.27.9' },
      traffic: { longRequestP99Seconds: 2 },
      loadBalancer: { ...BASE_LB, ...setting.lb },
      health: { exposure: 'hostPort', port: 18180 },
      drain: { lbMargin: '400ms', pollInterval: '100ms', safetyMargin: 2 },
      envoy: { terminationDrainDurationSeconds: 0.5, drainDurationSeconds: 45 },
    },
  };
}

export type ScenarioConfig = {
  scenario: string;
  title: string;
  setting: LbSetting;
  termination: Termination;
  pods: number;
  /** Steady load, or explicit requests started at given offsets (ms after the load starts). */
  load: { kind: 'steady'; options: Omit<LoadOptions, 'baseUrl' | 'paths'> } | { kind: 'single'; requests: Array<{ atMs: number; spec: RequestSpec }> };
  /** When the first pod starts leaving, ms after the load started. */
  leaveAtMs: number;
  /** Replace every pod, one after another (maxUnavailable 1, maxSurge 0), instead of one pod leaving. */
  rolling?: boolean;
};

export type ScenarioRun = {
  result: ScenarioResult;
  plan: Plan;
  records: RequestRecord[];
  terminations: TerminationLog[];
  haproxyConfig: string;
  /** Every DOWN HAProxy logged, any server, ms after the termination started, with the sessions it flushed. */
  downs: Array<{ atMs: number; server: string; sessionsActive: number }>;
  /** HAProxy's request log (httplog), `atMs` relative to the termination start. */
  haproxyLog: RequestLogLine[];
};

const TERMINATE: Record<Termination, (pod: Pod, plan: Plan) => Promise<TerminationLog>> = {
  gracegate: gracegateTermination,
  naive: (pod, plan) => naiveTermination(pod, plan, 'graceful'),
  'naive-listeners-stopped': (pod, plan) => naiveTermination(pod, plan, 'stopped'),
  seed: seedTermination,
};

export const SEQUENCE_LABEL: Record<Termination, string> = {
  gracegate: 'gracegate',
  naive: 'naive: 503 at once',
  'naive-listeners-stopped': 'naive: 503 + proxy stops accepting at once',
  seed: 'seed order: keep accepting, then 503',
};

function sum<T>(xs: T[], f: (x: T) => number): number {
  return xs.reduce((s, x) => s + f(x), 0);
}

export async function runScenario(cfg: ScenarioConfig): Promise<ScenarioRun> {
  const dir = mkdtempSync(join(tmpdir(), 'gg-e2e-'));
  const specObject = labSpec(cfg.setting, cfg.pods);
  const specFile = join(dir, 'gateway.yaml');
  writeFileSync(specFile, JSON.stringify(specObject, null, 2));
  const resolved = resolveGatewaySpec(specObject, specFile);
  const plan = planGateway(resolved);
  const pods: Pod[] = [];
  let haproxy: Haproxy | undefined;
  // Stopped in `finally` too: a run that throws half-way must not leave a load or a poll loop
  // running, or the test file's process never exits and the whole suite hangs.
  let stopLoad = (): void => {};
  let sampling = true;
  try {
    for (let i = 0; i < cfg.pods; i++) pods.push(await Pod.start(`pod-${i + 1}`, dir, plan));
    const serverList = pods.map((p) => `127.0.0.1:${p.ports.listen}@${p.ports.health}`).join(',');
    const lbConfig = runCli(['lb-config', specFile, '--backend-name', BACKEND, '--servers', serverList]);
    if (lbConfig.status !== 0) throw new Error(`gracegate lb-config failed: ${lbConfig.stderr}`);
    haproxy = await Haproxy.start(dir, lbConfig.stdout, BACKEND);
    for (let i = 0; i < pods.length; i++) await haproxy.waitStatus(`gw-${i + 1}`, /^UP/, 10_000);

    const baseUrl = `http://127.0.0.1:${haproxy.port}`;
    const loadStart = Date.now();
    let loadDone: Promise<{ records: RequestRecord[]; samples: Array<{ atMs: number; inFlight: number }> }>;
    if (cfg.load.kind === 'steady') {
      const lg = new LoadGenerator({ ...cfg.load.options, baseUrl, paths: STANDIN_PATHS });
      loadDone = lg.run();
      stopLoad = () => lg.stop();
    } else {
      let inFlight = 0;
      const samples: Array<{ atMs: number; inFlight: number }> = [];
      const sampler = setInterval(() => samples.push({ atMs: Date.now(), inFlight }), 50);
      loadDone = Promise.all(cfg.load.requests.map(async (r, i) => {
        await sleep(r.atMs);
        inFlight++;
        const rec = await sendOne(baseUrl, STANDIN_PATHS, r.spec, false, 15_000, i);
        inFlight--;
        return rec;
      })).then((records) => {
        clearInterval(sampler);
        samples.push({ atMs: Date.now(), inFlight });
        return { records, samples };
      });
    }

    await sleep(cfg.leaveAtMs);
    const podSamples: Array<[number, number]> = [];
    const terminations: TerminationLog[] = [];
    const leaving = pods[0]!;
    const sampler = (async () => {
      while (sampling) {
        try {
          if (leaving.proxy.running) podSamples.push([Date.now(), (await leaving.counts()).requests]);
        } catch {
          // the proxy is going away
        }
        await sleep(40);
      }
    })();
    const rolloutStart = Date.now();
    const lbUpLagMs: number[] = [];
    if (cfg.rolling) {
      for (let i = 0; i < pods.length; i++) {
        const old = pods[i]!;
        terminations.push(await TERMINATE[cfg.termination](old, plan));
        // maxSurge 0, maxUnavailable 1: the replacement comes up on the same node (same ports)
        // once the old pod is gone; Kubernetes moves on when it has been Ready (/health 200) for
        // the plan's minReadySeconds, the LB's time to take a new pod back in.
        pods[i] = await Pod.start(`pod-${i + 1}b`, dir, plan, old.ports);
        const readyAt = Date.now();
        void haproxy.waitStatus(`gw-${i + 1}`, /^UP/, 10_000).then(() => lbUpLagMs.push(Date.now() - readyAt), () => lbUpLagMs.push(NaN));
        await sleep(plan.timings.minReadySeconds * 1000);
      }
    } else {
      terminations.push(await TERMINATE[cfg.termination](leaving, plan));
    }
    const rolloutMs = Date.now() - rolloutStart;
    if (cfg.rolling) {
      // keep the load on the new pods a little longer, then end it
      await sleep(1000);
      stopLoad();
    }
    const { records, samples } = await loadDone;
    sampling = false;
    await sampler;
    await sleep(100);
    const stats = await haproxy.stats();

    const first = terminations[0]!;
    const t0 = first.startMs;
    const rel = (ms: number): number => ms - t0;
    const downEvents = haproxy.events.filter((e) => e.server === 'gw-1' && e.atMs >= t0);
    const down = downEvents.find((e) => e.state === 'DOWN');
    const nolb = downEvents.find((e) => e.state === 'NOLB');
    const mark = (id: 1 | 2 | 3 | 4) => first.marks.find((m) => m.id === id);
    // [4] from the harness's own poll of the proxy, after the drain started; the sidecar's as a fallback.
    const drainAt = mark(3)?.atMs;
    const zeroPoll = drainAt !== undefined ? podSamples.find(([t, n]) => t >= drainAt && n === 0) : undefined;
    const ev = (id: 1 | 2 | 3 | 4, name: string, fallbackNote: string): MeasuredEvent => {
      if (id === 4 && zeroPoll) return { id, name, atMs: rel(zeroPoll[0]), source: 'harness poll of the proxy' };
      const m = mark(id);
      return m ? { id, name, atMs: rel(m.atMs), source: m.source, ...(m.note ? { note: m.note } : {}) } : { id, name, atMs: null, source: '-', note: fallbackNote };
    };
    const events: MeasuredEvent[] = [
      ev(1, 'LB health fails', 'the LB endpoint never failed'),
      ev(2, 'K8s readiness fails', 'not part of this termination'),
      ev(3, 'proxy drain starts', 'no drain'),
      ev(4, 'in-flight reaches zero', 'in-flight never reached 0 while the proxy ran'),
      down
        ? { id: 5, name: 'LB marks the backend DOWN', atMs: rel(down.atMs), source: 'HAProxy log', ...(nolb ? { note: `NOLB at ${(rel(nolb.atMs) / 1000).toFixed(2)}s` } : {}) }
        : { id: 5, name: 'LB marks the backend DOWN', atMs: null, source: '-', note: 'not seen' },
      down && down.sessionsActive > 0 && plan.loadBalancer.cutsSessionsOnDown
        ? { id: 6, name: 'LB resets sessions', atMs: rel(down.atMs), source: 'HAProxy log', note: `${down.sessionsActive} sessions active at DOWN` }
        : { id: 6, name: 'LB resets sessions', atMs: null, source: '-', note: plan.loadBalancer.cutsSessionsOnDown ? 'no session left at DOWN' : 'the LB keeps sessions on DOWN' },
    ];
    const failures = failuresByKind(records);
    const streams = records.filter((r) => r.chunks);
    const servers = stats.servers;
    const result: ScenarioResult = {
      scenario: cfg.scenario,
      title: cfg.title,
      sequence: cfg.termination === 'gracegate' ? `gracegate ${plan.sequence}` : SEQUENCE_LABEL[cfg.termination],
      termination: cfg.termination,
      lbSetting: cfg.setting.label,
      requests: records.length,
      failures,
      failureTotal: sum(Object.values(failures), (n) => n),
      haproxy: {
        econ: sum(servers, (s) => s.econ),
        eresp: sum(servers, (s) => s.eresp),
        wretr: sum(servers, (s) => s.wretr),
        wredis: sum(servers, (s) => s.wredis),
        srvAbrt: sum(servers, (s) => s.srvAbrt),
        hrsp5xx: stats.backend?.hrsp5xx ?? 0,
      },
      chunks: streams.length > 0 ? { received: sum(streams, (r) => r.chunks!.received), expected: sum(streams, (r) => r.chunks!.expected) } : null,
      plannerFindings: plan.findings.filter((f) => f.expectedLoss !== undefined).map((f) => ({ id: f.id, expectedLoss: f.expectedLoss! })),
      events,
      clientInFlight: samples.map((s) => [rel(s.atMs), s.inFlight]),
      podInFlight: podSamples.map(([t, n]) => [rel(t), n]),
      terminationMs: rel(terminations[terminations.length - 1]!.endMs),
      loadStartMs: rel(loadStart),
      loadEndMs: rel(Math.max(...records.map((r) => r.endMs), loadStart)),
      ...(cfg.rolling ? { extra: { pods: cfg.pods, rolloutMs, preStopSleepSumMs: cfg.pods * (plan.timings.sequenceSeconds + plan.timings.minReadySeconds) * 1000, lbUpLagMs: lbUpLagMs.map((n) => Math.round(n)).join('/') } } : {}),
    };
    const haproxyLog = haproxy.requestLog.map((l) => ({ ...l, atMs: rel(l.atMs) }));
    const downs = haproxy.events.filter((e) => e.state === 'DOWN' && e.atMs >= t0).map((e) => ({ atMs: rel(e.atMs), server: e.server, sessionsActive: e.sessionsActive }));
    return { result, plan, records, terminations, haproxyConfig: haproxy.configText, downs, haproxyLog };
  } finally {
    stopLoad();
    sampling = false;
    await Promise.all([...pods.map((p) => p.kill()), haproxy?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

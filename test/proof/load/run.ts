/**
 * One load run: three gateway pods (load/pod.ts: real Envoy, the real hc, a compiled app each)
 * behind HAProxy running `gracegate lb-config`'s backend (load/lb.ts), two wrk generators (short
 * requests paced at a rate, long ones back to back on a few connections), one pod deleted the way the
 * kubelet deletes it (harness/terminations.ts) or all three replaced one after another, and every
 * request accounted for by its id: sent by wrk, logged by HAProxy, logged by the app, answered.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { planGateway, type Plan } from '../../../src/plan/plan-gateway';
import { podChanges } from '../../../src/pod/pod-changes';
import { resolveGatewaySpec } from '../../../src/schema/parse-spec';
import { runCli } from '../../support/run-cli';
import { httpCall } from '../harness/http';
import type { Pod } from '../harness/pod';
import { sleep } from '../harness/proc';
import { BACKEND, LB_SETTINGS, labSpec, serverOf, type LbSetting } from '../harness/scenario';
import { gracegateTermination, seedTermination, type TerminationLog } from '../harness/terminations';
import type { AppRecord } from './app';
import { LoadApp } from './app';
import { LoadHaproxy, withH2Servers, type LbLogLine } from './lb';
import { runH2load, type H2loadSummary } from './h2load';
import { LoadPod, type LoadPodOptions } from './pod';
import { Wrk, killQuietly, type WrkResult } from './wrk';
import type { SequenceProof } from '../harness/result';

export type LoadSequence = 'drain-first' | 'health-first' | 'soft-drain' | 'article-order';

/** Each sequence behind the HAProxy setting the existing scenarios give it; the article order as the contrast. */
export const SEQUENCES: Record<LoadSequence, { setting: LbSetting; termination: 'gracegate' | 'seed' }> = {
  'drain-first': { setting: LB_SETTINGS.flushRedispatch, termination: 'gracegate' },
  'health-first': { setting: LB_SETTINGS.noFlush, termination: 'gracegate' },
  'soft-drain': { setting: LB_SETTINGS.zeroExcuse, termination: 'gracegate' },
  'article-order': { setting: LB_SETTINGS.flushRedispatch, termination: 'seed' },
};

export type LoadShape = {
  /** The pods' HCM drain_timeout (unset: Envoy's 5 s). */
  hcmDrainTimeoutMs?: number;
  /** Short requests per second asked of wrk (paced). */
  rate: number;
  /** Connections sending long requests back to back, and their length range. */
  longConnections: number;
  longMs: [number, number];
  /** Load before the deletion, and after the last pod has left. */
  warmMs: number;
  tailMs: number;
};

export type LoadRunConfig = LoadShape & {
  sequence: LoadSequence;
  version: string;
  rolling?: boolean;
  /** HAProxy speaks HTTP/2 to the pods (`proto h2`). */
  h2ToPods?: boolean;
  /** h2load clients on HAProxy's h2 bind beside wrk, for the warm-up and `seconds` after (one pod deleted only). */
  h2Clients?: { clients: number; rpsPerClient: number; seconds: number };
  pod?: LoadPodOptions;
};

export type LostClass = 'cut at DOWN (D)' | 'ended by the leaving pod' | 'closed unanswered, no HAProxy line' | 'non-2xx' | 'other';

/** The harness's proof fields, here in ms after this pod's deletion started (null: did not happen). */
export type PodTimings = Pick<
  SequenceProof,
  'pod' | 'server' | 'finalState' | 'drainTimedOut' | 'lbFailMs' | 'drainStartMs' | 'zeroMs' | 'closedMs' | 'lbNolbMs'
> & {
  lbDownMs: number | null;
  proxyExitMs: number | null;
  /** [4] → the LB endpoint's 503 (drain-first: the hc's reaction), and → HAProxy's DOWN. */
  zeroToLbFailMs: number | null;
  /** The same as the harness saw it: [4] → the first non-200 of the LB endpoint, sampled every 50 ms (drain-first). */
  zeroToLbFailSeenMs: number | null;
  zeroToDownMs: number | null;
  /** Requests HAProxy logged as served by this pod after its deletion started. */
  servedAfterDeletion: number;
  /** Requests in flight on this pod when its deletion started (HAProxy's log: started before, ended after). */
  inFlightAtDeletion: number;
  /** The contrast: did in-flight reach 0 within the drain timeout (the harness's poll)? */
  contrastReachedZero?: boolean;
  detail: string[];
};

export type LoadRunResult = {
  name: string;
  sequence: LoadSequence;
  label: string;
  lbSetting: string;
  proxy: string;
  lb: string;
  rolling: boolean;
  h2ToPods: boolean;
  shape: LoadShape;
  loadavgAtStart: number[];
  /** Short requests answered 2xx per second over the load, and all requests answered per second. */
  achievedShortRate: number;
  achievedTotalRate: number;
  /** Requests counted (sent before the tail cut-off), long ones among them, answered 2xx, lost. */
  requests: number;
  longRequests: number;
  ok: number;
  lost: number;
  lostByClass: Partial<Record<LostClass, number>>;
  lostSamples: string[];
  /** Sent in the last tailCutMs before wrk stopped: wrk abandons what is in flight when it stops. */
  tailExcluded: number;
  /** Lost requests the app logged (it saw them) vs did not. */
  lostSeenByApp: number;
  wrkErrors: Record<string, number>;
  lbCounters: { econ: number; wretr: number; wredis: number; srvAbrt: number };
  /** The LB endpoint's answer times (ms), probed every 100 ms per pod while the load ran. */
  probe: { count: number; p50Ms: number; p99Ms: number; maxMs: number };
  shortLatencyUs: { p50: number; p99: number } | null;
  pods: PodTimings[];
  predicted: Array<{ id: string; expectedLoss: string }>;
  plannedSequence: string;
  rolloutMs: number | null;
  /** What the h2load clients got (cfg.h2Clients), else absent. */
  h2Clients?: H2loadSummary;
};

const quantile = (xs: number[], q: number): number => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

/** The lab's plan for a sequence (harness/scenario.ts labSpec: compressed time, three pods). */
export function loadPlan(dir: string, sequence: LoadSequence): { plan: Plan; specFile: string } {
  const specObject = labSpec(SEQUENCES[sequence].setting, 3);
  const specFile = join(dir, 'gateway.yaml');
  writeFileSync(specFile, JSON.stringify(specObject, null, 2));
  const plan = planGateway(resolveGatewaySpec(specObject, specFile));
  if (SEQUENCES[sequence].termination === 'gracegate' && plan.sequence !== sequence) {
    throw new Error(`the lab spec for ${sequence} plans ${plan.sequence}`);
  }
  return { plan, specFile };
}

/**
 * wrk's pacing for `rate` short requests a second: a request every 100 ms or so on each connection
 * (the pause is the period less 2 ms of expected latency), so the connections grow with the rate
 * and a request's own latency costs the rate little (a closed loop: each connection waits for its
 * answer) until the machine saturates.
 */
export function pacing(rate: number): { connections: number; delayMs: number } {
  const connections = Math.max(4, Math.min(2000, 2 * Math.ceil(rate / 20)));
  return { connections, delayMs: Math.max(1, Math.round((connections * 1000) / rate) - 2) };
}

/** A running set of pods + HAProxy, for runs and for calibration. */
export class LoadLab {
  private constructor(
    readonly dir: string,
    readonly plan: Plan,
    readonly apps: LoadApp[],
    readonly pods: LoadPod[],
    readonly lb: LoadHaproxy,
    readonly version: string,
    readonly podOptions: LoadPodOptions,
  ) {}

  static async start(sequence: LoadSequence, version: string, options: { h2ToPods?: boolean; pod?: LoadPodOptions } = {}): Promise<LoadLab> {
    const dir = mkdtempSync(join(tmpdir(), 'gg-load-'));
    const apps: LoadApp[] = [];
    const pods: LoadPod[] = [];
    try {
      const { plan, specFile } = loadPlan(dir, sequence);
      const changes = podChanges(plan);
      for (let i = 0; i < 3; i++) apps.push(await LoadApp.start(`app-${i + 1}`, dir));
      for (let i = 0; i < 3; i++) pods.push(await LoadPod.startLoad(`pod-${i + 1}`, dir, plan, changes, version, apps[i]!.port, options.pod));
      const servers = pods.map((p) => `127.0.0.1:${p.ports.listen}@${p.ports.health}`).join(',');
      const lbConfig = runCli(['lb-config', specFile, '--backend-name', BACKEND, '--servers', servers]);
      if (lbConfig.status !== 0) throw new Error(`gracegate lb-config failed: ${lbConfig.stderr}`);
      const lb = await LoadHaproxy.start(dir, options.h2ToPods ? withH2Servers(lbConfig.stdout) : lbConfig.stdout, BACKEND);
      const lab = new LoadLab(dir, plan, apps, pods, lb, version, options.pod ?? {});
      if (options.pod?.hcPollSeconds !== null) for (let i = 0; i < 3; i++) await lb.waitStatus(serverOf(i), /^UP/, 10_000);
      return lab;
    } catch (err) {
      await Promise.all([...pods.map((p) => p.kill()), ...apps.map((a) => a.stop())]);
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  get url(): string {
    return `http://127.0.0.1:${this.lb.port}`;
  }

  /** Starts the two generators; `tag` keeps their files apart from an earlier pair's. */
  startLoad(shape: Pick<LoadShape, 'rate' | 'longConnections' | 'longMs'>, tag: string): { short: Wrk; long: Wrk | undefined } {
    const dir = join(this.dir, `wrk-${tag}`);
    mkdirSync(dir, { recursive: true });
    const p = pacing(shape.rate);
    const short = Wrk.start({ url: this.url, prefix: 's', threads: 2, connections: p.connections, delayMs: p.delayMs, requestMs: [0, 0], dir });
    const long =
      shape.longConnections > 0
        ? Wrk.start({ url: this.url, prefix: 'l', threads: 1, connections: shape.longConnections, delayMs: 0, requestMs: shape.longMs, dir })
        : undefined;
    return { short, long };
  }

  /** Stops everything; GRACEGATE_LOAD_KEEP=1 keeps the folder (wrk's, HAProxy's and the apps' logs) and prints it. */
  async stop(): Promise<void> {
    await Promise.all([...this.pods.map((p) => p.kill()), ...this.apps.map((a) => a.stop()), this.lb.stop()]);
    if (process.env.GRACEGATE_LOAD_KEEP === '1') console.error(`load: kept ${this.dir}`);
    else rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Probes every pod's LB endpoint every 100 ms (as HAProxy does, one at a time) and keeps the answer times. */
function startProber(pods: () => LoadPod[]): { stop: () => Promise<number[]> } {
  const times: number[] = [];
  let on = true;
  const loop = (async () => {
    while (on) {
      for (const p of pods()) {
        const t = process.hrtime.bigint();
        try {
          const r = await httpCall('GET', `${p.healthUrl}/health_check.html`, 1000);
          if (r.status === 200) times.push(Number(process.hrtime.bigint() - t) / 1e6);
        } catch {
          // leaving or gone
        }
      }
      await sleep(100);
    }
  })();
  return {
    stop: async () => {
      on = false;
      await loop;
      return times;
    },
  };
}

function timingsOf(term: TerminationLog, server: string, lb: LoadHaproxy, log: LbLogLine[], plan: Plan): PodTimings {
  const t0 = term.startMs;
  const rel = (ms: number | null | undefined): number | null => (ms === null || ms === undefined ? null : Math.round(ms - t0));
  const s = term.sidecar;
  const mine = lb.events.filter((e) => e.server === server && e.atMs >= t0);
  const down = mine.find((e) => e.state === 'DOWN')?.atMs ?? null;
  const nolb = mine.find((e) => e.state === 'NOLB')?.atMs ?? null;
  const proxyExit = term.deletion?.containers.find((c) => c.name === 'istio-proxy')?.exitMs ?? null;
  const mark = (id: number) => term.marks.find((m) => m.id === id)?.atMs ?? null;
  const zero = s?.events.inFlightZero?.at ?? mark(4);
  const lbFail = s?.events.lbHealthFails?.at ?? mark(1);
  const closed = s?.history.find((h) => h.state === 'CLOSED' && h.at >= t0)?.at ?? null;
  return {
    pod: term.pod,
    server,
    finalState: s?.state ?? null,
    drainTimedOut: s?.drainTimedOut ?? null,
    lbFailMs: rel(lbFail),
    drainStartMs: rel(s?.events.proxyDrainStarts?.at ?? mark(3)),
    zeroMs: rel(zero),
    closedMs: rel(closed),
    lbNolbMs: rel(nolb),
    lbDownMs: rel(down),
    proxyExitMs: rel(proxyExit),
    zeroToLbFailMs: zero !== null && lbFail !== null && plan.sequence === 'drain-first' && term.kind === 'gracegate' ? Math.round(lbFail - zero) : null,
    zeroToLbFailSeenMs: (() => {
      if (zero === null || plan.sequence !== 'drain-first' || term.kind !== 'gracegate') return null;
      const seen = term.lbAnswers?.find((a) => a.atMs >= zero - 50 && a.answer !== '200');
      return seen ? Math.max(0, Math.round(seen.atMs - zero)) : null;
    })(),
    zeroToDownMs: zero !== null && down !== null ? Math.round(down - zero) : null,
    servedAfterDeletion: log.filter(
      (l) => l.server === server && l.startMs >= t0 && (proxyExit === null || l.startMs <= proxyExit) && l.terminationState === '----',
    ).length,
    inFlightAtDeletion: log.filter((l) => l.server === server && l.startMs < t0 && l.endMs > t0).length,
    ...(term.kind === 'seed' ? { contrastReachedZero: term.marks.some((m) => m.id === 4) } : {}),
    detail: term.detail,
  };
}

/** A run's name in reports and tests: `delete soft-drain h2 drain_timeout 200 ms Envoy 1.36.4`. */
export function runName(cfg: LoadRunConfig): string {
  const h2 = cfg.h2ToPods ? ' h2' : '';
  const dt = cfg.hcmDrainTimeoutMs !== undefined ? ` drain_timeout ${cfg.hcmDrainTimeoutMs} ms` : '';
  return `${cfg.rolling ? 'rolling' : 'delete'} ${cfg.sequence}${h2}${dt} Envoy ${cfg.version}`;
}

/** Runs one load scenario; every process it started is stopped at the end, whatever happened. */
export async function runLoad(cfg: LoadRunConfig): Promise<LoadRunResult> {
  const podOptions: LoadPodOptions = { ...(cfg.pod ?? {}), ...(cfg.hcmDrainTimeoutMs !== undefined ? { hcmDrainTimeoutMs: cfg.hcmDrainTimeoutMs } : {}) };
  const lab = await LoadLab.start(cfg.sequence, cfg.version, { ...(cfg.h2ToPods ? { h2ToPods: true } : {}), pod: podOptions });
  let h2: ReturnType<typeof runH2load> | undefined;
  let gens: { short: Wrk; long: Wrk | undefined } | undefined;
  let prober: { stop: () => Promise<number[]> } | undefined;
  try {
    const { plan, lb } = lab;
    const changes = podChanges(plan);
    const loadavgAtStart = loadavg().map((n) => Math.round(n * 100) / 100);
    const loadStart = Date.now();
    gens = lab.startLoad(cfg, 'run');
    if (cfg.h2Clients)
      h2 = runH2load(
        `http://127.0.0.1:${lb.h2Port}/?ms=100`,
        Math.round(cfg.warmMs / 1000 + cfg.h2Clients.seconds),
        cfg.h2Clients.clients,
        cfg.h2Clients.rpsPerClient,
      );
    prober = startProber(() => lab.pods.filter((p) => p.hc.running));
    await sleep(cfg.warmMs);
    const terminate = (pod: LoadPod) =>
      SEQUENCES[cfg.sequence].termination === 'gracegate' ? gracegateTermination(pod as unknown as Pod, plan) : seedTermination(pod as unknown as Pod, plan);
    const terms: Array<{ term: TerminationLog; server: string }> = [];
    const rolloutStart = Date.now();
    if (cfg.rolling) {
      for (let i = 0; i < lab.pods.length; i++) {
        const old = lab.pods[i]!;
        terms.push({ term: await terminate(old), server: serverOf(i) });
        await old.kill();
        lab.pods[i] = await LoadPod.startLoad(`pod-${i + 1}b`, lab.dir, plan, changes, cfg.version, lab.apps[i]!.port, podOptions, old.ports);
        await sleep(plan.timings.minReadySeconds * 1000);
      }
    } else {
      terms.push({ term: await terminate(lab.pods[0]!), server: serverOf(0) });
    }
    const rolloutMs = cfg.rolling ? Date.now() - rolloutStart : null;
    // Long enough that every request sent during the deletion is counted (account's tail cut-off).
    await sleep(Math.max(cfg.tailMs, cfg.longMs[1] + 2500));
    const h2Result = h2 ? await h2.done : undefined;
    h2 = undefined;
    const probeTimes = await prober.stop();
    prober = undefined;
    const stopAt = Date.now();
    const [short, long] = await Promise.all([gens.short.stop(), gens.long?.stop()]);
    gens = undefined;
    // The apps flush their logs every 100 ms; HAProxy writes each line as the request ends.
    await sleep(400);
    const lbLog = lb.requestLog();
    const stats = await lb.servers();
    const appLog = new Map<string, AppRecord>();
    for (const a of lab.apps) for (const [id, r] of a.records()) appLog.set(id, r);
    const results = [short, ...(long ? [long] : [])];
    const r = account(cfg, lab, plan, results, lbLog, appLog, terms, {
      loadavgAtStart,
      loadStart,
      stopAt,
      probeTimes,
      rolloutMs,
      lbCounters: {
        econ: stats.reduce((n, s) => n + s.econ, 0),
        wretr: stats.reduce((n, s) => n + s.wretr, 0),
        wredis: stats.reduce((n, s) => n + s.wredis, 0),
        srvAbrt: stats.reduce((n, s) => n + s.srvAbrt, 0),
      },
    });
    if (cfg.h2Clients) {
      if (!h2Result?.summary) throw new Error(`h2load printed no summary: ${h2Result?.output.slice(-2000)}`);
      r.h2Clients = h2Result.summary;
    }
    return r;
  } finally {
    h2?.kill();
    if (gens) {
      killQuietly(gens.short);
      killQuietly(gens.long);
    }
    await prober?.stop();
    await lab.stop();
  }
}

function account(
  cfg: LoadRunConfig,
  lab: LoadLab,
  plan: Plan,
  results: WrkResult[],
  lbLog: LbLogLine[],
  appLog: Map<string, AppRecord>,
  terms: Array<{ term: TerminationLog; server: string }>,
  m: { loadavgAtStart: number[]; loadStart: number; stopAt: number; probeTimes: number[]; rolloutMs: number | null; lbCounters: LoadRunResult['lbCounters'] },
): LoadRunResult {
  // wrk abandons what is in flight when it stops: requests sent within the longest request (plus
  // a margin) of the stop are not counted either way.
  const tailCutMs = cfg.longMs[1] + 1500;
  const cutoff = m.stopAt - tailCutMs;
  const lbById = new Map<string, LbLogLine>();
  for (const l of lbLog) lbById.set(l.id, l);
  const leaving = new Set(terms.map((t) => t.server));
  let requests = 0;
  let longRequests = 0;
  let ok = 0;
  let okShort = 0;
  let tailExcluded = 0;
  let lostSeenByApp = 0;
  const lostByClass: Partial<Record<LostClass, number>> = {};
  const lostSamples: string[] = [];
  for (const r of results) {
    for (const s of r.sent) {
      // wrk's buffer-sizing call: not a request unless something saw it.
      if (s.primer && !r.answered.has(s.id) && !lbById.has(s.id) && !appLog.has(s.id)) continue;
      if (s.atMs >= cutoff) {
        tailExcluded++;
        continue;
      }
      requests++;
      if (s.ms > 0) longRequests++;
      const a = r.answered.get(s.id);
      if (a && a.status >= 200 && a.status < 300) {
        ok++;
        if (s.ms === 0) okShort++;
        continue;
      }
      const l = lbById.get(s.id);
      const app = appLog.get(s.id);
      if (app) lostSeenByApp++;
      const cls: LostClass = a
        ? 'non-2xx'
        : !l
          ? 'closed unanswered, no HAProxy line'
          : l.terminationState.startsWith('D')
            ? 'cut at DOWN (D)'
            : leaving.has(l.server) && l.terminationState.startsWith('S')
              ? 'ended by the leaving pod'
              : 'other';
      lostByClass[cls] = (lostByClass[cls] ?? 0) + 1;
      if (lostSamples.length < 12) {
        const t0 = terms[0]?.term.startMs ?? 0;
        lostSamples.push(
          `${s.id} sent at ${s.atMs - t0} ms (ms=${s.ms}): ${a ? `HTTP ${a.status}` : 'no answer'}; HAProxy: ${l ? `${l.server} ${l.status} ${l.terminationState}` : 'no line'}; app: ${app ? app.outcome : 'not seen'}`,
        );
      }
    }
  }
  const lost = requests - ok;
  const loadSeconds = (cutoff - m.loadStart) / 1000;
  const shortSummary = results[0]?.summary;
  const wrkErrors: Record<string, number> = {};
  for (const r of results) for (const [k, v] of Object.entries(r.summary?.errors ?? {})) wrkErrors[k] = (wrkErrors[k] ?? 0) + v;
  return {
    name: runName(cfg),
    sequence: cfg.sequence,
    label: SEQUENCES[cfg.sequence].termination === 'gracegate' ? `gracegate ${plan.sequence}` : 'article order: keep accepting, then 503',
    lbSetting: SEQUENCES[cfg.sequence].setting.label,
    proxy: `Envoy ${cfg.version}`,
    lb: lab.lb.version,
    rolling: cfg.rolling === true,
    h2ToPods: cfg.h2ToPods === true,
    shape: {
      rate: cfg.rate,
      longConnections: cfg.longConnections,
      longMs: cfg.longMs,
      warmMs: cfg.warmMs,
      tailMs: cfg.tailMs,
      ...(cfg.hcmDrainTimeoutMs !== undefined ? { hcmDrainTimeoutMs: cfg.hcmDrainTimeoutMs } : {}),
    },
    loadavgAtStart: m.loadavgAtStart,
    achievedShortRate: Math.round(okShort / loadSeconds),
    achievedTotalRate: Math.round(ok / loadSeconds),
    requests,
    longRequests,
    ok,
    lost,
    lostByClass,
    lostSamples,
    tailExcluded,
    lostSeenByApp,
    wrkErrors,
    lbCounters: m.lbCounters,
    probe: {
      count: m.probeTimes.length,
      p50Ms: Math.round(quantile(m.probeTimes, 0.5) * 100) / 100,
      p99Ms: Math.round(quantile(m.probeTimes, 0.99) * 100) / 100,
      maxMs: Math.round(Math.max(0, ...m.probeTimes) * 100) / 100,
    },
    shortLatencyUs: shortSummary ? { p50: shortSummary.latencyUs.p50, p99: shortSummary.latencyUs.p99 } : null,
    pods: terms.map((t) => timingsOf(t.term, t.server, lab.lb, lbLog, plan)),
    predicted: plan.findings.filter((f) => f.expectedLoss !== undefined).map((f) => ({ id: f.id, expectedLoss: f.expectedLoss! })),
    plannedSequence: plan.sequence,
    rolloutMs: m.rolloutMs,
  };
}

/**
 * One end-to-end run: a compressed-time spec, its plan, N pods configured from its PodChanges (real
 * Envoy + the real sidecar), `gracegate lb-config` output in a real LB in front (HAProxy, or Envoy
 * for the `envoy` model), a load, one pod leaving (or all of them, one after another), and the
 * measured result. Every process is killed at the end, whatever happened.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planGateway, type Plan } from '../../../src/plan/plan-gateway';
import type { Sequence } from '../../../src/contract/hc';
import { podChanges } from '../../../src/pod/pod-changes';
import { resolveGatewaySpec } from '../../../src/schema/parse-spec';
import { runCli } from '../../support/run-cli';
import { EnvoyLb } from './envoy-lb';
import type { FrontLb } from './front-lb';
import { Haproxy, type RequestLogLine } from './haproxy';
import { failuresByKind, LoadGenerator, sendOne, type LoadOptions, type Paths, type RequestRecord, type RequestSpec } from '../../../src/verify/load';
import { LongLivedClients, type LongLivedClientKind } from './long-lived';
import { longLivedReport, type LlReport, type PodTimes } from './long-lived-report';
import { lastServedEndMs, podEnvoyLog, type PodEnvoyLog } from './envoy-log';
import { Pod } from './pod';
import { proxyLabel, type ProxyChoice } from './proxies';
import { sleep, waitFor } from './proc';
import type { PersistedState } from '../../../src/hc/types';
import type { MeasuredEvent, ScenarioResult, SequenceProof, Termination } from './result';
import { gracegateTermination, naiveTermination, seedTermination, type TerminationLog } from './terminations';
import { machineStops, type MachineStop } from './machine-stops';

/** The upstream app's paths (test/support/test-upstream.ts). */
export const APP_PATHS: Paths = {
  slow: (ms) => `/slow?ms=${ms}`,
  stream: (chunks, intervalMs) => `/stream?chunks=${chunks}&intervalMs=${intervalMs}`,
};

export const BACKEND = 'gateway';

/**
 * An LB behaviour the spec can express, in the spec's own words: HAProxy settings are merged over
 * BASE_LB; a setting with `model` of its own (the in-mesh Envoy) is used as given.
 */
export type LbSetting = {
  label: string;
  lb: Record<string, unknown>;
  /** The order the lab spec forces (spec.sequence); absent: the plan's own, the least expected loss. */
  sequence?: Sequence;
};

/** Time compressed: checks every 300 ms (HAProxy's check timeout is inter: a loaded CI machine needs that much), requests of 50 ms - 2 s (docs/facts.md §2 measured with inter 500, 50-3000 ms). */
const BASE_LB = { model: 'haproxy', inter: '300ms', fall: 2, rise: 2, retries: 3 };

export const LB_SETTINGS = {
  flushRedispatch: { label: 'shutdown-sessions + redispatch', lb: { onMarkedDown: 'shutdown-sessions', redispatch: true } },
  /** The same with the keep-alive race retried (report only: its repeats measure what retry-on takes away). */
  flushRedispatchRetry: {
    label: 'shutdown-sessions + redispatch + retry-on',
    lb: { onMarkedDown: 'shutdown-sessions', redispatch: true, retryOnEmptyResponse: true },
  },
  /**
   * drain-first behind an LB that loses refused connects: not the plan's own order there (health-first
   * loses less, issue 48), forced so that the measured refusals of the existing runs stay comparable.
   */
  flushNoRedispatch: {
    label: 'shutdown-sessions, no redispatch',
    lb: { onMarkedDown: 'shutdown-sessions', redispatch: false },
    sequence: 'drain-first',
  },
  noFlush: { label: 'no shutdown-sessions', lb: {} },
  disableOn404: { label: 'disable-on-404 + shutdown-sessions', lb: { disableOn404: true, onMarkedDown: 'shutdown-sessions' } },
  /** The zero-excuse setting: the plan predicts no loss at all (NOLB first; a GET/HEAD retried on an empty response). */
  zeroExcuse: {
    label: 'disable-on-404 + shutdown-sessions + retry-on',
    lb: { disableOn404: true, onMarkedDown: 'shutdown-sessions', retryOnEmptyResponse: true },
  },
  /** The `envoy` model: a real Envoy in front, active health check every 300 ms (a 503 ejects at once), connections kept on ejection. */
  envoyActiveHc: {
    label: 'Envoy active health check',
    lb: { model: 'envoy', activeHealthCheck: { interval: '300ms', unhealthyThreshold: 2, healthyThreshold: 1 } },
  },
} satisfies Record<string, LbSetting>;

/**
 * The spec of the lab gateway: real planner, compressed numbers. `hcSidecar: 'native'` puts it on
 * Kubernetes 1.33, where the plan makes the hc a native sidecar (docs/native-sidecar.md). With
 * `autoscaling`, an HPA owns the count instead (maxReplicas pods, one per node).
 */
export function labSpec(
  setting: LbSetting,
  replicas: number,
  hcSidecar: 'native' | 'container' = 'container',
  autoscaling?: { minReplicas: number; maxReplicas: number },
): Record<string, unknown> {
  return {
    apiVersion: 'gracegate.dev/v1alpha1',
    kind: 'GracefulGateway',
    metadata: { name: 'igw-lab', namespace: 'istio-ingress' },
    spec: {
      ...(hcSidecar === 'native' ? { kubernetesVersion: '1.33' } : {}),
      ...(autoscaling ? { autoscaling } : { replicas }),
      nodes: replicas,
      chart: { kind: 'istio-gateway', version: '1.27.9' },
      traffic: { longRequestP99Seconds: 2 },
      loadBalancer: 'model' in setting.lb ? setting.lb : { ...BASE_LB, ...setting.lb },
      ...(setting.sequence ? { sequence: setting.sequence } : {}),
      health: { exposure: 'hostPort', port: 18180 },
      drain: { lbMargin: '400ms', pollInterval: '100ms', safetyMargin: 2 },
      // No kube-proxy between the LB and the pods on loopback: no rule to wait for after readiness
      // (the cluster's spec takes kube-proxy's defaults instead: test/proof/cluster/gateway.ts).
      kubeProxy: { minSyncPeriod: 0, propagation: 0 },
      envoy: { terminationDrainDurationSeconds: 0.5, drainDurationSeconds: 45 },
      // No Prometheus in the lab: the sidecar exits at SIGTERM instead of waiting 2 x scrapeInterval for a last scrape.
      observability: { prometheus: 'none' },
    },
  };
}

/** What the clients do during a run. */
export type ScenarioLoad = {
  /**
   * Keep-alive clients through the LB from the start until LOAD_TAIL_MS after the last pod has
   * left (every container exited), so the load outlasts the whole sequence and the proxy's exit.
   */
  steady?: Omit<LoadOptions, 'baseUrl' | 'paths' | 'durationMs'>;
  /** Requests started at given offsets (ms after the load started), each on a connection of its own. */
  requests?: Array<{ atMs: number; spec: RequestSpec; label: string }>;
};

export type ScenarioConfig = {
  scenario: string;
  title: string;
  setting: LbSetting;
  termination: Termination;
  pods: number;
  load: ScenarioLoad;
  /** When the first pod starts leaving, ms after the load started. */
  leaveAtMs: number;
  /** Replace every pod, one after another (maxUnavailable 1, maxSurge 0), instead of one pod leaving. */
  rolling?: boolean;
  /** How the hc sidecar runs: `native` plans the lab gateway on Kubernetes 1.33 (a native sidecar). @default container */
  hcSidecar?: 'native' | 'container';
  /**
   * An HPA owns the count (spec.autoscaling, `pods` = maxReplicas): instead of one pod leaving, one
   * scale-down takes out the pods the plan says one HPA decision removes (scaleDownPodsPerStep), all
   * at once, then `up` pods come back on the freed nodes (a scale-up) and take traffic for `upHoldMs`.
   */
  scale?: { minReplicas: number; up: number; upHoldMs: number };
  /**
   * Reconnecting long-lived clients through the LB for the whole run (harness/long-lived.ts), and,
   * with `plan`, the spec's spec.traffic.longLived for them: the pods' Envoys get the plan's
   * max_stream_duration / max_connection_duration and the sidecar's drain timeout its stream wait.
   * Without `plan` the spec says nothing of them (gracegate's behaviour before the long-lived plan).
   */
  longLived?: { clients: Partial<Record<LongLivedClientKind, number>>; plan?: { boundSeconds: number } };
};

/**
 * spec.traffic.longLived for the lab: the schema asks for a bound of at least 10 s (a production
 * floor); the lab compresses time, so the validated spec carries 10 s and the plan is made with the
 * lab's bound, as the lab's other numbers are (a drain timeout of seconds, a 100 ms poll).
 */
export const LAB_LIFETIME_PLACEHOLDER_SECONDS = 10;

/** The resolved lab spec, with the long-lived bound compressed to `boundSeconds` when given. */
export function resolveLabSpec(specObject: Record<string, unknown>, specFile: string, boundSeconds?: number): ReturnType<typeof resolveGatewaySpec> {
  const resolved = resolveGatewaySpec(specObject, specFile);
  const ll = resolved.spec.spec.traffic.longLived;
  if (boundSeconds !== undefined) {
    if (!ll) throw new Error('a compressed long-lived bound needs spec.traffic.longLived');
    ll.maxStreamLifetimeSeconds = boundSeconds;
  }
  return resolved;
}

/** Adds spec.traffic.longLived (kinds, clients reconnect, the placeholder bound) to a lab spec object. */
export function withLongLived(specObject: Record<string, unknown>, kinds: LongLivedClientKind[]): Record<string, unknown> {
  const spec = specObject.spec as { traffic: Record<string, unknown> };
  const specKinds = [...new Set(kinds.map((k) => (k === 'grpc-bidi' ? 'grpc-stream' : k)))];
  return {
    ...specObject,
    spec: {
      ...spec,
      traffic: { ...spec.traffic, longLived: { kinds: specKinds, clientsReconnect: true, maxStreamLifetimeSeconds: LAB_LIFETIME_PLACEHOLDER_SECONDS } },
    },
  };
}

/**
 * With single requests, the steady load starts this much later: by then HAProxy has sent each
 * single request to a pod, and the pod holding them is the one that leaves.
 */
const SINGLES_FIRST_MS = 100;
/** ...and waits for them at most this much longer (a loaded machine), well before any pod leaves. */
const SINGLES_ARRIVAL_BOUND_MS = 700;

/** How long the steady load keeps going after the last pod has left: requests that start after the proxy's exit. */
export const LOAD_TAIL_MS = 1000;
/** A bound only: the steady load stops at LOAD_TAIL_MS after the last pod has left. */
const LOAD_BOUND_MS = 120_000;

/** A state change the LB made to a server (DOWN, UP, NOLB), ms after the run's first termination started. */
/** `reason`: HAProxy's own words for the change (its check's result), where the LB gives them. */
export type LbEvent = { atMs: number; server: string; state: 'DOWN' | 'UP' | 'NOLB'; sessionsActive: number; reason?: string };

export type ScenarioRun = {
  result: ScenarioResult;
  plan: Plan;
  records: RequestRecord[];
  /** Each termination, with the LB server name of the pod that left. */
  terminations: Array<TerminationLog & { server: string }>;
  lbConfig: string;
  /** Every DOWN the LB made, any server, ms after the termination started, with the sessions it flushed (HAProxy). */
  downs: LbEvent[];
  /** The LB's request log (HAProxy's httplog, the front Envoy's access log), every time in it relative to the termination start. */
  lbLog: RequestLogLine[];
  /**
   * What every pod's Envoy (the replacements' too) logged of the requests it served, times relative
   * to the termination start; absent where the pods are not the harness's (the cluster's).
   */
  envoys?: PodEnvoyLog[];
  /** The long-lived clients' account (cfg.longLived), else null. */
  longLived: LlReport | null;
  /** Where the machine itself stopped under the run (machine-stops.ts), on the records' clock. */
  machineStops: MachineStop[];
};

const TERMINATE: Record<Termination, (pod: Pod, plan: Plan) => Promise<TerminationLog>> = {
  gracegate: gracegateTermination,
  naive: (pod) => naiveTermination(pod, 'graceful'),
  'naive-listeners-stopped': (pod) => naiveTermination(pod, 'stopped'),
  seed: seedTermination,
};

export const SEQUENCE_LABEL: Record<Termination, string> = {
  gracegate: 'gracegate',
  naive: 'naive: 503 at once',
  'naive-listeners-stopped': 'naive: 503 + proxy stops accepting at once',
  seed: 'article order: keep accepting, then 503',
};

function sum<T>(xs: T[], f: (x: T) => number): number {
  return xs.reduce((s, x) => s + f(x), 0);
}

/** The LB's server name for the pod at `index` (lb-config names them gw-1, gw-2, … in --servers order). */
export const serverOf = (index: number): string => `gw-${index + 1}`;

/**
 * A proof's marks from the sidecar's own state file, on the termination's clock (`rel`): its
 * final state, whether the drain timed out, [1], [3], [4] and CLOSED (the harness and the cluster
 * build their proofs from the same file).
 */
export function sidecarMarks(
  p: PersistedState | undefined,
  closedAt: number | undefined,
  rel: (ms: number | null | undefined) => number | null,
): Pick<SequenceProof, 'finalState' | 'drainTimedOut' | 'lbFailMs' | 'drainStartMs' | 'drainAckedMs' | 'zeroMs' | 'closedMs'> {
  return {
    finalState: p?.state ?? null,
    drainTimedOut: p?.drainTimedOut ?? null,
    lbFailMs: rel(p?.events.lbHealthFails?.at),
    drainStartMs: rel(p?.events.proxyDrainStarts?.at),
    drainAckedMs: rel(p?.drainAckedAt),
    zeroMs: rel(p?.events.inFlightZero?.at),
    closedMs: rel(closedAt),
  };
}

/**
 * A gracegate termination's proof, relative to `t0`, with what HAProxy saw of its pod and what its
 * own Envoy logged of the responses it served (`envoy`: that pod's log, read to its end).
 */
function proofOf(
  term: TerminationLog,
  server: string,
  t0: number,
  lbEvents: LbEvent[],
  envoy: PodEnvoyLog | undefined,
  records: RequestRecord[],
): SequenceProof {
  const rel = (ms: number | null | undefined): number | null => (ms === null || ms === undefined ? null : ms - t0);
  const startMs = term.startMs - t0;
  const p = term.sidecar;
  const closed = p?.history.find((h) => h.state === 'CLOSED' && h.at >= term.startMs);
  const mine = lbEvents.filter((e) => e.server === server && e.atMs >= startMs);
  return {
    pod: term.pod,
    server,
    sequence: term.label,
    startMs,
    graceMs: term.deletion?.graceMs ?? 0,
    ...sidecarMarks(p, closed?.at, rel),
    waitClosed: term.hooks ? { ...term.hooks.waitClosed, atMs: term.hooks.waitClosed.atMs - t0 } : null,
    drainExit: term.hooks ? { ...term.hooks.drain, atMs: term.hooks.drain.atMs - t0 } : null,
    containers: (term.deletion?.containers ?? []).map((c) => ({
      name: c.name,
      preStopEndMs: rel(c.preStop?.endMs),
      sigtermMs: c.sigtermMs - t0,
      sigkillMs: rel(c.sigkillMs),
      exitMs: c.exitMs - t0,
    })),
    lbDownMs: mine.find((e) => e.state === 'DOWN')?.atMs ?? null,
    lbNolbMs: mine.find((e) => e.state === 'NOLB')?.atMs ?? null,
    // When the pod's Envoy sent its last response's last byte, not when HAProxy had passed it on:
    // [4] is Envoy's count reaching 0, and HAProxy logged ends up to tens of ms after Envoy's under
    // load (measured at load average 19), so its log made a correct drain look early.
    lastServedEndMs: envoy ? lastServedEndMs(envoy) : null,
    lastServedBy: 'its Envoy',
    lastRequestStartMs: Math.max(...records.map((r) => r.startMs - t0)),
  };
}

/**
 * The LB the spec's model names, running `gracegate lb-config`'s output: HAProxy, or a real Envoy
 * of the pods' version for the `envoy` model.
 */
export async function startFrontLb(dir: string, specFile: string, plan: Plan, pods: Pod[], proxy: ProxyChoice): Promise<FrontLb> {
  const servers = pods.map((p) => `127.0.0.1:${p.ports.listen}@${p.ports.health}`).join(',');
  const lbConfig = runCli(['lb-config', specFile, '--backend-name', BACKEND, '--servers', servers]);
  if (lbConfig.status !== 0) throw new Error(`gracegate lb-config failed: ${lbConfig.stderr}`);
  if (plan.loadBalancer.model !== 'envoy') return Haproxy.start(dir, lbConfig.stdout, BACKEND);
  if (proxy.kind !== 'envoy') throw new Error("the envoy LB model runs a real Envoy of the pods' version: give the run a real Envoy");
  return EnvoyLb.start(
    dir,
    proxy.version,
    lbConfig.stdout,
    pods.map((p, i) => ({ name: serverOf(i), port: p.ports.listen, healthPort: p.ports.health })),
  );
}

/** Runs one scenario with `proxy` as every pod's istio-proxy. */
export async function runScenario(cfg: ScenarioConfig, proxy: ProxyChoice): Promise<ScenarioRun> {
  const dir = mkdtempSync(join(tmpdir(), 'gg-e2e-'));
  const lab = labSpec(cfg.setting, cfg.pods, cfg.hcSidecar, cfg.scale ? { minReplicas: cfg.scale.minReplicas, maxReplicas: cfg.pods } : undefined);
  const llKinds = Object.keys(cfg.longLived?.clients ?? {}) as LongLivedClientKind[];
  const specObject = cfg.longLived?.plan ? withLongLived(lab, llKinds) : lab;
  const specFile = join(dir, 'gateway.yaml');
  writeFileSync(specFile, JSON.stringify(specObject, null, 2));
  const resolved = resolveLabSpec(specObject, specFile, cfg.longLived?.plan?.boundSeconds);
  const plan = planGateway(resolved);
  // What synth would apply to the pods: the sidecar's config and istio-proxy's annotation.
  const changes = podChanges(plan);
  const pods: Pod[] = [];
  let lb: FrontLb | undefined;
  // Stopped in `finally` too: a run that throws half-way must not leave a load or a poll loop
  // running, or the test file's process never exits and the whole suite hangs.
  let stopLoad = (): void => {};
  let sampling = true;
  let clientSampler: NodeJS.Timeout | undefined;
  let llClients: LongLivedClients | undefined;
  /** Every pod the run started (replacements too), with its LB server name. */
  const allPods: Array<{ pod: Pod; server: string }> = [];
  try {
    for (let i = 0; i < cfg.pods; i++) pods.push(await Pod.start(`pod-${i + 1}`, dir, plan, changes, proxy));
    pods.forEach((pod, i) => allPods.push({ pod, server: serverOf(i) }));
    lb = await startFrontLb(dir, specFile, plan, pods, proxy);
    for (let i = 0; i < pods.length; i++) await lb.waitStatus(serverOf(i), /^UP/, 10_000);
    const front = lb;

    const baseUrl = `http://127.0.0.1:${front.port}`;
    if (cfg.longLived) {
      // gRPC clients pick among the pods of the moment (a replacement takes its predecessor's place).
      llClients = new LongLivedClients(baseUrl, cfg.longLived.clients, () =>
        pods.map((p) => ({ listenPort: p.ports.listen, tcpPort: p.proxy.tcpPort, healthUrl: p.healthUrl, upstreamPort: p.proxy.upstreamPort })),
      );
      await llClients.start();
    }
    const loadStart = Date.now();
    const steady = cfg.load.steady ? new LoadGenerator({ ...cfg.load.steady, durationMs: LOAD_BOUND_MS, baseUrl, paths: APP_PATHS }) : undefined;
    stopLoad = () => steady?.stop();
    let singlesInFlight = 0;
    const singles = Promise.all(
      (cfg.load.requests ?? []).map(async (r, i) => {
        await sleep(r.atMs);
        singlesInFlight++;
        const rec = await sendOne(baseUrl, APP_PATHS, r.spec, false, 15_000, -1 - i);
        singlesInFlight--;
        return { ...rec, label: r.label };
      }),
    );
    const samples: Array<{ atMs: number; inFlight: number }> = [];
    clientSampler = setInterval(() => samples.push({ atMs: Date.now(), inFlight: (steady?.inFlightNow ?? 0) + singlesInFlight }), 50);
    // The pod that leaves: the first, or the one HAProxy gave the single requests to.
    let leavingIndex = 0;
    if (cfg.load.requests) {
      await sleep(SINGLES_FIRST_MS);
      // On a loaded machine the requests can take longer to reach a pod: wait for them, bounded.
      const want = cfg.load.requests.length;
      let counts: number[] = [];
      await waitFor(
        'the single requests in flight on one pod',
        SINGLES_ARRIVAL_BOUND_MS,
        async () => {
          counts = await Promise.all(pods.map((p) => p.activeRequests()));
          return counts.some((n) => n === want) ? true : undefined;
        },
        50,
      ).catch(() => undefined);
      leavingIndex = counts.findIndex((n) => n === want);
      if (leavingIndex < 0) throw new Error(`the single requests are not all on one pod (active requests per pod: ${counts.join(', ')})`);
    }
    const steadyDone = steady ? steady.run() : Promise.resolve({ records: [] as RequestRecord[] });

    await sleep(cfg.leaveAtMs - (Date.now() - loadStart));
    const podSamples: Array<[number, number]> = [];
    const terminations: TerminationLog[] = [];
    const terminatedServers: string[] = [];
    const leaving = pods[leavingIndex]!;
    const sampler = (async () => {
      while (sampling) {
        try {
          if (leaving.proxy.running) podSamples.push([Date.now(), await leaving.activeRequests()]);
        } catch {
          // the proxy is going away
        }
        await sleep(40);
      }
    })();
    const rolloutStart = Date.now();
    const lbUpLagMs: number[] = [];
    let scaledUpAt: number | undefined;
    if (cfg.rolling) {
      for (let i = 0; i < pods.length; i++) {
        const old = pods[i]!;
        terminations.push(await TERMINATE[cfg.termination](old, plan));
        terminatedServers.push(serverOf(i));
        // Its processes are gone; what the harness started beside them (the upstream app, the fake xDS) goes too.
        await old.kill();
        // maxSurge 0, maxUnavailable 1: the replacement comes up on the same node (same ports)
        // once the old pod is gone; Kubernetes moves on when it has been Ready (/health 200) for
        // the plan's minReadySeconds, the LB's time to take a new pod back in.
        pods[i] = await Pod.start(`pod-${i + 1}b`, dir, plan, changes, proxy, old.ports);
        allPods.push({ pod: pods[i]!, server: serverOf(i) });
        const readyAt = Date.now();
        void front.waitStatus(serverOf(i), /^UP/, 10_000).then(
          () => lbUpLagMs.push(Date.now() - readyAt),
          () => lbUpLagMs.push(NaN),
        );
        await sleep(plan.timings.minReadySeconds * 1000);
      }
    } else if (cfg.scale) {
      if (plan.scaling.mode !== 'autoscaled') throw new Error('a scale scenario needs an autoscaled plan');
      // One HPA decision: the pods it removes are deleted at the same instant, and run their sequences side by side.
      const down = plan.scaling.scaleDownPodsPerStep.value;
      const leavingPods = pods.slice(0, down);
      terminations.push(...(await Promise.all(leavingPods.map((p) => TERMINATE[cfg.termination](p, plan)))));
      terminatedServers.push(...leavingPods.map((_, i) => serverOf(i)));
      await Promise.all(leavingPods.map((p) => p.kill()));
      // The scale-up: new pods on the freed nodes (hostPort: the LB's server for that node), Ready, then UP in the LB.
      for (let i = 0; i < cfg.scale.up; i++) {
        pods[i] = await Pod.start(`pod-${i + 1}b`, dir, plan, changes, proxy, leavingPods[i]!.ports);
        allPods.push({ pod: pods[i]!, server: serverOf(i) });
        const readyAt = Date.now();
        await front.waitStatus(serverOf(i), /^UP/, 10_000);
        lbUpLagMs.push(Date.now() - readyAt);
      }
      scaledUpAt = Date.now();
      await sleep(cfg.scale.upHoldMs);
    } else {
      terminations.push(await TERMINATE[cfg.termination](leaving, plan));
      terminatedServers.push(serverOf(leavingIndex));
    }
    const rolloutMs = Date.now() - rolloutStart;
    await sleep(LOAD_TAIL_MS);
    stopLoad();
    await llClients?.settle(5000);
    await llClients?.stop();
    const records = [...(await steadyDone).records, ...(await singles)];
    clearInterval(clientSampler);
    samples.push({ atMs: Date.now(), inFlight: 0 });
    sampling = false;
    await sampler;
    // The LB logs a request when it ends, and Envoy flushes its log every 50 ms: wait (bounded)
    // until every client request is in the LB's log.
    await waitFor('the LB to log every request', 2000, () => (front.requestLog.length >= records.length ? true : undefined)).catch(() => undefined);
    const lbCounters = await front.counters();

    const first = terminations[0]!;
    const t0 = first.startMs;
    const rel = (ms: number): number => ms - t0;
    const lbEvents: LbEvent[] = front.events
      .filter((e) => e.atMs >= t0)
      .map((e) => ({ atMs: rel(e.atMs), server: e.server, state: e.state, sessionsActive: e.sessionsActive }));
    const lbLog = front.requestLog.map((l) => ({ ...l, atMs: rel(l.atMs), startMs: rel(l.startMs), endMs: rel(l.endMs) }));
    // Every pod's Envoy logs each stream as it ends (harness/envoy-log.ts): stop the pods the run
    // left running (it is over: the load and the clients have stopped, the LB's account is read)
    // and read every pod's log to its end.
    await Promise.all(pods.map((p) => p.kill()));
    await Promise.all(allPods.map(({ pod }) => pod.proxy.logClosed));
    const envoys = allPods.map(({ pod, server }) => podEnvoyLog(pod, server, t0));
    const firstServer = terminatedServers[0]!;
    const down = lbEvents.find((e) => e.server === firstServer && e.state === 'DOWN');
    const nolb = lbEvents.find((e) => e.server === firstServer && e.state === 'NOLB');
    const mark = (id: 1 | 2 | 3 | 4) => first.marks.find((m) => m.id === id);
    // [4] from the harness's own poll of the proxy, after the drain started; the sidecar's as a fallback.
    const drainAt = mark(3)?.atMs;
    const zeroPoll = drainAt !== undefined ? podSamples.find(([t, n]) => t >= drainAt && n === 0) : undefined;
    const ev = (id: 1 | 2 | 3 | 4, name: string, fallbackNote: string): MeasuredEvent => {
      if (id === 4 && zeroPoll) return { id, name, atMs: rel(zeroPoll[0]), source: 'harness poll of the proxy' };
      const m = mark(id);
      return m
        ? { id, name, atMs: rel(m.atMs), source: m.source, ...(m.note ? { note: m.note } : {}) }
        : { id, name, atMs: null, source: '-', note: fallbackNote };
    };
    const lbSource = front.kind === 'haproxy' ? 'HAProxy log' : 'front Envoy /clusters';
    const events: MeasuredEvent[] = [
      ev(1, 'LB health fails', 'the LB endpoint never failed'),
      ev(2, 'K8s readiness fails', 'not part of this termination'),
      ev(3, 'proxy drain starts', 'no drain'),
      ev(4, 'in-flight reaches zero', 'in-flight never reached 0 while the proxy ran'),
      down
        ? {
            id: 5,
            name: 'LB marks the backend DOWN',
            atMs: down.atMs,
            source: lbSource,
            ...(nolb ? { note: `NOLB at ${(nolb.atMs / 1000).toFixed(2)}s` } : {}),
          }
        : { id: 5, name: 'LB marks the backend DOWN', atMs: null, source: '-', note: 'not seen' },
      down && down.sessionsActive > 0 && plan.loadBalancer.cutsSessionsOnDown
        ? { id: 6, name: 'LB resets sessions', atMs: down.atMs, source: lbSource, note: `${down.sessionsActive} sessions active at DOWN` }
        : {
            id: 6,
            name: 'LB resets sessions',
            atMs: null,
            source: '-',
            note: plan.loadBalancer.cutsSessionsOnDown ? 'no session left at DOWN' : 'the LB keeps sessions on DOWN',
          },
    ];
    const failures = failuresByKind(records);
    const streams = records.filter((r) => r.chunks);
    const result: ScenarioResult = {
      scenario: cfg.scenario,
      title: cfg.title,
      sequence: cfg.termination === 'gracegate' ? `gracegate ${plan.sequence}` : SEQUENCE_LABEL[cfg.termination],
      termination: cfg.termination,
      lbSetting: cfg.setting.label,
      requests: records.length,
      failures,
      failureTotal: sum(Object.values(failures), (n) => n),
      lbCounters,
      chunks: streams.length > 0 ? { received: sum(streams, (r) => r.chunks!.received), expected: sum(streams, (r) => r.chunks!.expected) } : null,
      plannerFindings: plan.findings.filter((f) => f.expectedLoss !== undefined).map((f) => ({ id: f.id, expectedLoss: f.expectedLoss! })),
      events,
      clientInFlight: samples.map((s) => [rel(s.atMs), s.inFlight]),
      podInFlight: podSamples.map(([t, n]) => [rel(t), n]),
      terminationMs: rel(terminations[terminations.length - 1]!.endMs),
      loadStartMs: rel(loadStart),
      loadEndMs: rel(Math.max(...records.map((r) => r.endMs), loadStart)),
      proofs: terminations.flatMap((t, i) =>
        t.kind === 'gracegate'
          ? [
              proofOf(
                t,
                terminatedServers[i]!,
                t0,
                lbEvents,
                envoys.find((e) => e.pod === t.pod),
                records,
              ),
            ]
          : [],
      ),
      proxy: proxyLabel(proxy),
      lb: front.version,
      ...(cfg.rolling
        ? {
            extra: {
              pods: cfg.pods,
              rolloutMs,
              preStopSleepSumMs: cfg.pods * (plan.timings.sequenceSeconds + plan.timings.minReadySeconds) * 1000,
              lbUpLagMs: lbUpLagMs.map((n) => Math.round(n)).join('/'),
            },
          }
        : {}),
      ...(cfg.scale && scaledUpAt !== undefined
        ? {
            extra: {
              podsBefore: cfg.pods,
              scaledDown: terminations.length,
              scaledUp: cfg.scale.up,
              // Responses the scale-up pods served (their servers, after they came up).
              servedAfterScaleUp: lbLog.filter(
                (l) => l.startMs >= rel(scaledUpAt!) && terminatedServers.slice(0, cfg.scale!.up).includes(l.server) && l.terminationState === '----',
              ).length,
              lbUpLagMs: lbUpLagMs.map((n) => Math.round(n)).join('/'),
            },
          }
        : {}),
    };
    const downs = lbEvents.filter((e) => e.state === 'DOWN');
    let longLived: LlReport | null = null;
    if (llClients) {
      const podTimes: PodTimes[] = allPods.map(({ pod, server }) => {
        const term = terminations.find((t) => t.pod === pod.name);
        const exit = term?.deletion?.containers.find((c) => c.name === 'istio-proxy')?.exitMs ?? pod.proxy.exitedAtMs;
        const down = term ? front.events.find((e) => e.server === server && e.state === 'DOWN' && e.atMs >= term.startMs) : undefined;
        return {
          upstreamPort: pod.proxy.upstreamPort,
          pod: pod.name,
          server,
          terminationStartMs: term?.startMs ?? null,
          proxyExitMs: term ? (exit ?? null) : null,
          killedAtMs: pod.proxy.killedAtMs,
          lbDownMs: down?.atMs ?? null,
          streamEnds: pod.proxy.streamEnds(),
        };
      });
      const boundMs = plan.longLived?.maxStreamDurationSeconds ? plan.longLived.maxStreamDurationSeconds.value * 1000 : null;
      longLived = longLivedReport(llClients, boundMs, podTimes, t0);
    }
    return {
      result,
      plan,
      records,
      terminations: terminations.map((t, i) => ({ ...t, server: terminatedServers[i]! })),
      lbConfig: front.configText,
      downs,
      lbLog,
      envoys,
      longLived,
      machineStops: machineStops(samples.map((x) => x.atMs)),
    };
  } finally {
    stopLoad();
    await llClients?.stop().catch(() => undefined);
    sampling = false;
    clearInterval(clientSampler);
    await Promise.all([...pods.map((p) => p.kill()), lb?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

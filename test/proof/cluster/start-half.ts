/**
 * The start half of a rollout on the real cluster (issue 50): a gateway behind HAProxy at its most
 * eager (rise 1), rolled again and again under load with kube-proxy at its defaults, every new pod's
 * timeline witnessed (arrivals.ts) and every failed request assigned to a half and a cause.
 */
import { LB_SETTINGS, type LbSetting } from '../harness/scenario';
import { lossProblems, runSequenceProblems } from '../harness/expect';
import type { AssignedFailure, ArrivalTimeline } from './arrivals';
import { installGateway, uninstallGateway, type ChartVersion, type GatewayOptions } from './gateway';
import { STATIC_NODE_PORTS } from './layout';
import { labGatewayOptions } from './sessions';
import { startLb, stopLb, terminationUnderLoad, type ClusterAction } from './termination';

/** One start-half session: a gateway, an LB setting, and the actions run one after another. */
export type StartHalfSession = {
  key: string;
  setting: LbSetting;
  chart: ChartVersion;
  replicas: number;
  actions: ClusterAction[];
  /** Extra spec fields (merged into spec.spec). */
  specPatch?: Record<string, unknown>;
  /** spec.health.service (omitted: the plan chooses; the lab's short sequences get the gateway's own Service). */
  healthPortOn?: 'gateway' | 'own';
  /** The sidecar's config changed from the plan's (the contrast: no start hold, as before issue 50). */
  hcConfigPatch?: Record<string, unknown>;
};

/** HAProxy at its most eager: one good check and the node is UP (the lab's other settings as they are). */
export const eager = (s: LbSetting, extra: Record<string, unknown> = {}): LbSetting => ({
  label: `${s.label}, rise 1${Object.entries(extra)
    .map(([k, v]) => `, ${k} ${String(v)}`)
    .join('')}`,
  lb: { ...s.lb, rise: 1, ...extra },
});

/**
 * Each session ends with a scale-up by one: with one pod per node, the new pod lands on the node
 * that had none, the node whose traffic NodePort kube-proxy drops until its first local endpoint
 * (externalTrafficPolicy Local), and the LB had it DOWN.
 */
const rollouts = (n: number): ClusterAction[] => [...Array.from({ length: n }, (): ClusterAction => 'rollout'), 'scale-up'];
/** The contrast and the start hold: three rollouts are enough to show their windows. */
const THREE_ROLLOUTS = rollouts(3);
/** The plan's own layout for these short sequences, held to issue 50's proof: ten rollouts in a row. */
const TEN_ROLLOUTS = rollouts(10);

/** The sidecar as it was before issue 50: OPEN as soon as Envoy serves, whatever the kubelet and kube-proxy have done. */
export const NO_START_HOLD = { startHold: { afterReadiness: false, seconds: 0 } } as const;

/**
 * The witness sessions (issue 50, item 1). retries 0: a connect the node drops fails at HAProxy's
 * connect timeout, nothing retried (the plan refuses drain-first without retries, so soft-drain).
 */
export const START_HALF_SESSIONS: StartHalfSession[] = [
  {
    key: 'start-today-drain-first',
    setting: eager(LB_SETTINGS.flushRedispatch),
    chart: '1.27.9',
    replicas: 2,
    actions: THREE_ROLLOUTS,
    healthPortOn: 'own',
    hcConfigPatch: NO_START_HOLD,
  },
  {
    key: 'start-today-retries0',
    setting: eager(LB_SETTINGS.disableOn404, { retries: 0 }),
    chart: '1.27.9',
    replicas: 2,
    actions: THREE_ROLLOUTS,
    healthPortOn: 'own',
    hcConfigPatch: NO_START_HOLD,
  },
  {
    key: 'start-held-retries0',
    setting: eager(LB_SETTINGS.disableOn404, { retries: 0 }),
    chart: '1.27.9',
    replicas: 2,
    actions: THREE_ROLLOUTS,
    healthPortOn: 'own',
  },
  { key: 'start-held-drain-first', setting: eager(LB_SETTINGS.flushRedispatch), chart: '1.27.9', replicas: 2, actions: THREE_ROLLOUTS, healthPortOn: 'own' },
  // The health port on the gateway's own Service (the plan's choice for these short sequences): no hold needed.
  {
    key: 'start-port-retries0',
    setting: eager(LB_SETTINGS.disableOn404, { retries: 0 }),
    chart: '1.27.9',
    replicas: 2,
    actions: TEN_ROLLOUTS,
    healthPortOn: 'gateway',
  },
  {
    key: 'start-port-drain-first',
    setting: eager(LB_SETTINGS.flushRedispatch),
    chart: '1.27.9',
    replicas: 2,
    actions: TEN_ROLLOUTS,
    healthPortOn: 'gateway',
  },
  // The third sequence: no flush at DOWN, so the plan signals the LB first (health-first).
  {
    key: 'start-port-health-first',
    setting: eager(LB_SETTINGS.noFlush),
    chart: '1.27.9',
    replicas: 2,
    actions: TEN_ROLLOUTS,
    healthPortOn: 'gateway',
  },
];

/** What docs/cluster/results.json keeps of the start half (render.ts renders it). */
export type StartHalfResults = {
  measuredAt: string;
  /** The plan's start hold and the propagation it was derived from (seconds). */
  holdSeconds: number;
  propagationSeconds: number;
  sessions: Array<{
    key: string;
    /** The sidecar in words: as before issue 50, or with the plan's start hold. */
    hold: string;
    /** gracegate's layout (the plan's hold, or the health port on the gateway's Service); false: the contrast. */
    held: boolean;
    /** Where the LB's probe entered (plan.healthProbe.via); omitted in results of before it was recorded: a health Service of its own. */
    probe?: 'gateway-service' | 'health-service';
    lbSetting: string;
    runs: Array<Pick<StartHalfRun, 'action' | 'requests' | 'failures' | 'arrivals' | 'settledMs' | 'rolloutTime'>>;
  }>;
};

/**
 * A rollout's time beside its lower bound (issue 50, item 5). The bound is what no order can avoid,
 * pod by pod: the new pod's start (bound to its node) to Ready, the LB's rise (taking it in), the
 * LB's detection (taking an old pod out) and the drain of the longest request the old pod held. A
 * rollout that keeps one pod per node pays them in turn: the first new pod may surge onto a spare
 * node, but an old pod leaves only once a new one is in, and each next new pod waits for the node an
 * old one leaves. What the plan adds beyond them (minReadySeconds, the start hold, the LB buffer's
 * margin, the proxy's exit) is the ratio's excess over 1.
 */
export type RolloutTime = {
  /** From `kubectl rollout restart` to the later of the last old pod's exit and the last new pod's UP at the LB (ms). */
  durationMs: number;
  lowerBoundMs: number;
  terms: { startToReadyMs: number[]; lbRiseMs: number; lbDetectMs: number; drainMs: number[] };
  ratio: number;
  /** The duration along the rollout's chain, term by term (rolloutChain); absent in results of before it was recorded, null where the pods did not run as one chain. */
  chain?: RolloutChain | null;
};

/**
 * A rollout's duration as the chain its pods ran in (ms, summed over the pods; the terms add up to
 * the duration): new pod i is bound to a node (at the restart, or once old pod i-1 has left the node
 * it takes), starts, is Ready, counts as available after minReadySeconds, and then the Deployment
 * takes old pod i, which leaves (its preStop to its last exit).
 *   - `reactionsMs`: what Kubernetes itself takes: the Deployment creating each new pod and the
 *     scheduler binding it (from the restart, or from the exit of the old pod whose node it takes),
 *     and the Deployment taking the next old pod beyond minReadySeconds;
 *   - `startsMs`: each new pod bound to Ready (as in the bound);
 *   - `minReadyMs`: the plan's minReadySeconds, once per new pod;
 *   - `leavingMs`: each old pod's preStop to its last container's exit;
 *   - `tailMs`: the last new pod's UP at the LB after the last old pod's exit (0 when it came first).
 */
export type RolloutChain = { reactionsMs: number; startsMs: number; minReadyMs: number; leavingMs: number; tailMs: number };

/**
 * A rollout's pods paired as they ran (one pod per node): the i-th new pod bound is the replacement
 * the i-th old pod to leave waited for; undefined where fewer new pods were seen.
 */
export function inRunOrder<N extends { scheduledMs: number | null }, O extends { fromMs: number }>(
  news: readonly N[],
  olds: readonly O[],
): Array<{ replacement: N | undefined; old: O }> {
  const bound = [...news].sort((a, b) => (a.scheduledMs ?? 0) - (b.scheduledMs ?? 0));
  return [...olds].sort((a, b) => a.fromMs - b.fromMs).map((old, i) => ({ replacement: bound[i], old }));
}

/** The chain, or null where the pods did not run as one (a new pod bound before the old pod it follows had left). */
export function rolloutChain(
  readyAtMs: ReadonlyArray<{ scheduledMs: number; readyMs: number }>,
  leaving: ReadonlyArray<{ fromMs: number; toMs: number }>,
  minReadySeconds: number,
  durationMs: number,
): RolloutChain | null {
  if (readyAtMs.length !== leaving.length || leaving.length === 0) return null;
  const minReadyMs = minReadySeconds * 1000;
  const out: RolloutChain = { reactionsMs: 0, startsMs: 0, minReadyMs: 0, leavingMs: 0, tailMs: 0 };
  let freedMs = 0;
  for (const { replacement, old: o } of inRunOrder(readyAtMs, leaving)) {
    const n = replacement!;
    if (n.scheduledMs < freedMs || o.fromMs < n.readyMs) return null;
    out.reactionsMs += n.scheduledMs - freedMs + (o.fromMs - n.readyMs - minReadyMs);
    out.startsMs += n.readyMs - n.scheduledMs;
    out.minReadyMs += minReadyMs;
    out.leavingMs += o.toMs - o.fromMs;
    freedMs = o.toMs;
  }
  out.tailMs = durationMs - freedMs;
  return out;
}

export function rolloutTime(
  arrivals: readonly ArrivalTimeline[],
  leaving: ReadonlyArray<{ fromMs: number; toMs: number }>,
  drains: ReadonlyArray<{ drainStartMs: number | null; zeroMs: number | null }>,
  plan: { lbRecoverSeconds: number; lbDetectSeconds: number; minReadySeconds: number },
): RolloutTime | null {
  // From the pod bound to its node, not from its creation: a new pod created while the old one
  // still holds its node (one pod per node) waits Pending for that pod's drain and exit, which the
  // bound counts once, as the old pod's.
  const readyAt = arrivals.map((a) => {
    const at = [a.readyMs, a.trafficSliceReadyMs].filter((x): x is number => x !== null);
    return at.length === 0 || a.scheduledMs === null ? null : { scheduledMs: a.scheduledMs, readyMs: Math.min(...at) };
  });
  const ready = readyAt.map((r) => (r === null ? null : r.readyMs - r.scheduledMs));
  const drainMs = drains.map((d) => (d.drainStartMs !== null && d.zeroMs !== null ? d.zeroMs - d.drainStartMs : null));
  const ups = arrivals.map((a) => a.lbUpMs);
  if (ready.includes(null) || drainMs.includes(null) || ups.includes(null) || leaving.length === 0) return null;
  const startToReadyMs = ready as number[];
  const lbRiseMs = plan.lbRecoverSeconds * 1000;
  const lbDetectMs = plan.lbDetectSeconds * 1000;
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const lowerBoundMs = Math.round(sum(startToReadyMs) + arrivals.length * lbRiseMs + leaving.length * lbDetectMs + sum(drainMs as number[]));
  const durationMs = Math.max(...leaving.map((l) => l.toMs), ...(ups as number[]));
  return {
    durationMs,
    lowerBoundMs,
    terms: { startToReadyMs, lbRiseMs, lbDetectMs, drainMs: drainMs as number[] },
    ratio: Math.round((durationMs / lowerBoundMs) * 100) / 100,
    chain: rolloutChain(readyAt as Array<{ scheduledMs: number; readyMs: number }>, leaving, plan.minReadySeconds, durationMs),
  };
}

export type StartHalfRun = {
  session: string;
  action: ClusterAction;
  lbSetting: string;
  requests: number;
  failures: AssignedFailure[];
  arrivals: ArrivalTimeline[];
  /** What the termination half's checks found (harness/expect.ts). */
  terminationProblems: string[];
  settledMs: number;
  /** The rollout's time beside its lower bound (null: a witness missing, or not a rollout). */
  rolloutTime: RolloutTime | null;
  /** The leaving pods (ms after the action), HAProxy's state changes and its request log of the run, for reading a failure. */
  leaving: Array<{ pod: string; node: string; fromMs: number; toMs: number }>;
  lbEvents: Array<{ atMs: number; server: string; state: string; reason: string }>;
  lbLog: Array<{ startMs: number; endMs: number; server: string; status: number; state: string; connectMs?: number; retries?: number; redispatched?: boolean }>;
};

/** The lab's port bands: this file's health NodePorts and HAProxy ports. */
const HEALTH_NODE_PORT_BASE = STATIC_NODE_PORTS.startHalf;
const LB_PORT_BASE = 8200;

export function startHalfOptions(s: StartHalfSession, index: number): GatewayOptions {
  return labGatewayOptions(s, HEALTH_NODE_PORT_BASE + index, {
    ...(s.specPatch ? { specPatch: s.specPatch } : {}),
    ...(s.healthPortOn ? { healthPortOn: s.healthPortOn } : {}),
    ...(s.hcConfigPatch ? { hcConfigPatch: s.hcConfigPatch } : {}),
  });
}

/** Runs a session's actions under load; `onRun` sees each run as it ends. */
export async function runStartHalf(s: StartHalfSession, index: number, onRun: (r: StartHalfRun) => void = () => {}): Promise<StartHalfRun[]> {
  const g = await installGateway(startHalfOptions(s, index));
  const out: StartHalfRun[] = [];
  let lb: Awaited<ReturnType<typeof startLb>> | undefined;
  try {
    lb = await startLb(g, LB_PORT_BASE + index);
    for (const action of s.actions) {
      const run = await terminationUnderLoad(g, lb, action);
      const r: StartHalfRun = {
        session: s.key,
        action,
        lbSetting: s.setting.label,
        requests: run.run.records.length,
        failures: run.failures,
        arrivals: run.arrivals,
        terminationProblems: [...lossProblems(run.run), ...runSequenceProblems(run.run)],
        settledMs: run.settledMs,
        rolloutTime:
          action === 'rollout'
            ? rolloutTime(
                run.arrivals,
                run.leavingSpans.map((l) => ({ fromMs: l.fromMs - run.t0, toMs: l.toMs - run.t0 })),
                run.run.result.proofs,
                run.run.plan.timings,
              )
            : null,
        leaving: run.leavingSpans.map((l) => ({ ...l, fromMs: l.fromMs - run.t0, toMs: l.toMs - run.t0 })),
        lbEvents: run.run.downs.map((d) => ({ atMs: d.atMs, server: d.server, state: d.state, reason: d.reason ?? '' })),
        lbLog: run.run.lbLog.map((l) => ({
          startMs: l.startMs,
          endMs: l.endMs,
          server: l.server,
          status: l.status,
          state: l.terminationState,
          ...(l.connectMs === undefined ? {} : { connectMs: l.connectMs }),
          ...(l.retries === undefined ? {} : { retries: l.retries, redispatched: l.redispatched ?? false }),
        })),
      };
      out.push(r);
      onRun(r);
    }
  } finally {
    if (lb) await stopLb(lb);
    await uninstallGateway(g);
  }
  return out;
}

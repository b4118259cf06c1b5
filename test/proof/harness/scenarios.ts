/**
 * The scenarios of issue 5, defined once: the tests assert on them, and report-main runs the same
 * definitions to write docs/e2e/RESULTS.md. Times are the lab plan's (labSpec): LB buffer 1 s,
 * drain timeout 3 s, terminationDrainDuration 0.5 s.
 */
import type { RequestSpec } from '../../../src/verify/load';
import { BACKGROUND, MIXED } from '../../../src/verify/mixes';
import { LB_SETTINGS, type LbSetting, type ScenarioConfig, type ScenarioLoad } from './scenario';
import type { Sequence } from '../../../src/contract/hc';

const steady = (seed: number): ScenarioLoad['steady'] => ({ workers: 12, mix: MIXED, requestTimeoutMs: 15_000, mixKey: seed });

/** S1 and S4 keep two clients of short requests going beside their one long request: the LB's view of the pod is measured under traffic. */
const background = (seed: number): ScenarioLoad['steady'] => ({
  workers: 2,
  mix: BACKGROUND,
  requestTimeoutMs: 15_000,
  mixKey: seed,
});

/**
 * The three LB behaviours with a gracegate sequence that docs/facts.md §2 says is lossless, one per
 * sequence; soft-drain's with retry-on, so that the plan predicts no loss at all (zero excuse).
 */
export const ONE_PER_SEQUENCE: LbSetting[] = [LB_SETTINGS.flushRedispatch, LB_SETTINGS.noFlush, LB_SETTINGS.zeroExcuse];

/**
 * S1 and S4 start their pod's termination this long after the long request (the harness first
 * finds the pod HAProxy gave it to, 100 ms in).
 */
const LEAVE_AT_MS = 150;

/**
 * S1's request: 2.8 s, so it ends 2.65 s into the termination. It must still run when a proxy
 * released at the drain start [3] would be gone ([3] + terminationDrainDuration 0.5 s), so an early
 * release cuts it; end within the drain timeout (3 s) after [3], so a drain that waits lets it
 * finish; and stay under HAProxy's `timeout server`, which lb-config sets to the drain timeout.
 * The sequence starts when `gracegate drain` is up: 0.25-0.6 s after the deletion measured here,
 * 1 s under a load average of 17. drain-first drains at once, the other orders one LB buffer (1 s)
 * later, so the request fits any start of the sequence from -0.35 s (drain-first) to 1.15 s (the
 * others). S4's stream is 19 chunks 150 ms apart (2.85 s) for the same reasons.
 */
const LONG_REQUEST: RequestSpec = { kind: 'slow', ms: 2800 };
const STREAM: RequestSpec = { kind: 'stream', chunks: 19, intervalMs: 150 };

const single = (spec: RequestSpec, label: string, seed: number): ScenarioLoad => ({ requests: [{ atMs: 0, spec, label }], steady: background(seed) });

export const S1: ScenarioConfig[] = [
  {
    scenario: 'S1',
    title: 'one long request in flight',
    setting: LB_SETTINGS.flushRedispatch,
    termination: 'naive',
    pods: 2,
    load: single(LONG_REQUEST, 'long request', 1),
    leaveAtMs: LEAVE_AT_MS,
  },
  ...ONE_PER_SEQUENCE.map(
    (setting, i): ScenarioConfig => ({
      scenario: 'S1',
      title: 'one long request in flight',
      setting,
      termination: 'gracegate',
      pods: 2,
      load: single(LONG_REQUEST, 'long request', 2 + i),
      leaveAtMs: LEAVE_AT_MS,
    }),
  ),
];

export const S3: ScenarioConfig = {
  scenario: 'S3',
  title: 'retries hide resets',
  setting: LB_SETTINGS.flushRedispatch,
  termination: 'naive-listeners-stopped',
  pods: 2,
  load: { steady: steady(3) },
  leaveAtMs: 1500,
};

export const S4: ScenarioConfig[] = [
  {
    scenario: 'S4',
    title: 'a streaming response',
    setting: LB_SETTINGS.flushRedispatch,
    termination: 'naive',
    pods: 2,
    load: single(STREAM, 'stream', 5),
    leaveAtMs: LEAVE_AT_MS,
  },
  ...ONE_PER_SEQUENCE.map(
    (setting, i): ScenarioConfig => ({
      scenario: 'S4',
      title: 'a streaming response',
      setting,
      termination: 'gracegate',
      pods: 2,
      load: single(STREAM, 'stream', 6 + i),
      leaveAtMs: LEAVE_AT_MS,
    }),
  ),
];

const S5_SETTINGS: LbSetting[] = [LB_SETTINGS.flushRedispatch, LB_SETTINGS.flushNoRedispatch, LB_SETTINGS.noFlush, LB_SETTINGS.disableOn404];

export const S5_GRACEGATE: ScenarioConfig[] = [LB_SETTINGS.flushRedispatch, LB_SETTINGS.flushNoRedispatch, LB_SETTINGS.noFlush, LB_SETTINGS.zeroExcuse].map(
  (setting, i) => ({
    scenario: 'S5',
    title: 'steady load, mixed lengths, one pod leaves',
    setting,
    termination: 'gracegate',
    pods: 2,
    load: { steady: steady(10 + i) },
    leaveAtMs: 1500,
  }),
);

/** S5 drain-first behind shutdown-sessions + redispatch with retry-on: the report repeats it beside S5_GRACEGATE[0]. */
export const S5_RETRY: ScenarioConfig = { ...S5_GRACEGATE[0]!, setting: LB_SETTINGS.flushRedispatchRetry };

export const S5_SEED: ScenarioConfig[] = S5_SETTINGS.map((setting, i) => ({
  scenario: 'S5',
  title: 'steady load, mixed lengths, one pod leaves',
  setting,
  termination: 'seed',
  pods: 2,
  load: { steady: steady(10 + i) },
  leaveAtMs: 1500,
}));

/** The load runs until one second after the last replacement pod is Ready. */
export const ROLLING: ScenarioConfig = {
  scenario: 'rolling',
  title: 'rolling replacement of every pod under load (maxUnavailable 1, maxSurge 0)',
  setting: LB_SETTINGS.flushRedispatch,
  termination: 'gracegate',
  pods: 3,
  load: { steady: steady(42) },
  leaveAtMs: 1000,
  rolling: true,
};

/** The `envoy` LB model: a real Envoy in front (active health check), where the plan picks health-first and must lose nothing. */
export const ENVOY_LB: ScenarioConfig = {
  scenario: 'S5',
  title: 'steady load, mixed lengths, one pod leaves',
  setting: LB_SETTINGS.envoyActiveHc,
  termination: 'gracegate',
  pods: 2,
  load: { steady: steady(20) },
  leaveAtMs: 1500,
};

/**
 * An autoscaled gateway (HPA 1-3, one pod per node) under load: one scale-down from 3 to 1 (the
 * HPA's default behaviour takes both surplus pods out in one decision, so both drain side by side),
 * then a scale-up to 2 that takes traffic. One run per LB behaviour the plan calls lossless for it
 * (health-first, soft-drain with retry-on), and drain-first, where it predicts refused connects.
 */
export const SCALE: ScenarioConfig[] = [LB_SETTINGS.noFlush, LB_SETTINGS.zeroExcuse, LB_SETTINGS.flushRedispatch].map((setting, i) => ({
  scenario: 'scale',
  title: 'HPA scale-down 3 -> 1 (two pods at once) and scale-up to 2 under load',
  setting,
  termination: 'gracegate',
  pods: 3,
  load: { steady: steady(60 + i) },
  leaveAtMs: 1500,
  scale: { minReplicas: 1, up: 1, upHoldMs: 2000 },
}));

/**
 * Long-lived clients (issue 16): two WebSocket, two SSE, two gRPC bidirectional-stream and two raw TCP
 * clients that reconnect and resume, beside S5's steady load (gRPC and TCP straight to the pods,
 * harness/long-lived.ts says why). The plan's runs give the spec spec.traffic.longLived with a 3 s lifetime bound
 * (max_stream_duration 3 s, max_connection_duration 2 s, drain timeout 4 s = the stream wait); the
 * contrast runs leave it out (gracegate before the long-lived plan). Behind HAProxy without
 * shutdown-sessions (health-first): the LB keeps a stream open on DOWN, so what ends it is Envoy's.
 */
export const LL_CLIENTS = { websocket: 2, sse: 2, 'grpc-bidi': 2, tcp: 2 } as const;
export const LL_BOUND_SECONDS = 3;

export const S5_LONG_LIVED: ScenarioConfig = {
  scenario: 'S5-long-lived',
  title: 'steady load and reconnecting WebSocket/SSE/gRPC/TCP clients, one pod leaves, the long-lived plan',
  setting: LB_SETTINGS.noFlush,
  termination: 'gracegate',
  pods: 2,
  load: { steady: steady(70) },
  leaveAtMs: 1500,
  longLived: { clients: LL_CLIENTS, plan: { boundSeconds: LL_BOUND_SECONDS } },
};

/** The contrast: the same clients, no spec.traffic.longLived. */
export const S5_LONG_LIVED_UNPLANNED: ScenarioConfig = {
  ...S5_LONG_LIVED,
  scenario: 'S5-long-lived-unplanned',
  title: 'steady load and reconnecting WebSocket/SSE/gRPC/TCP clients, one pod leaves, no long-lived plan',
  longLived: { clients: LL_CLIENTS },
};

/** The article order with the same clients (report only). */
export const S5_LONG_LIVED_SEED: ScenarioConfig = { ...S5_LONG_LIVED_UNPLANNED, scenario: 'S5-long-lived-seed', termination: 'seed' };

/** A rolling replacement of two pods with the long-lived plan (two pods: every termination of ROLLING, in less time). */
export const ROLLING_LONG_LIVED: ScenarioConfig = {
  scenario: 'rolling-long-lived',
  title: 'rolling replacement of every pod under load with reconnecting WebSocket/SSE/gRPC/TCP clients, the long-lived plan',
  setting: LB_SETTINGS.noFlush,
  termination: 'gracegate',
  pods: 2,
  load: { steady: steady(71) },
  leaveAtMs: 1000,
  rolling: true,
  longLived: { clients: LL_CLIENTS, plan: { boundSeconds: LL_BOUND_SECONDS } },
};

/**
 * Issue 48: the families the LB vendors fall into, each played by a real HAProxy setting, and every
 * order gracegate can run behind it. `retries 0` stands for an LB that fails a refused connection to
 * the client at once (F5 reselect-tries 0, NetScaler without request retry, NLB: docs/lb-model.md);
 * HAProxy's own retries on the same server would only hold the client.
 */
export type OrderFamily = { key: string; family: string; standsFor: string; lb: Record<string, unknown>; orders: Sequence[] };

export const ORDER_FAMILIES: OrderFamily[] = [
  {
    key: 'flush-lost',
    family: 'flush on DOWN, a refused connection lost',
    standsFor: 'F5 service-down-action reset, NetScaler defaults, NLB with connection termination',
    lb: { onMarkedDown: 'shutdown-sessions', retries: 0 },
    orders: ['health-first', 'drain-first'],
  },
  {
    key: 'kept',
    family: 'sessions kept on DOWN, a refused connection lost',
    standsFor: 'F5 service-down-action none, NetScaler downStateFlush DISABLED, NLB without connection termination',
    lb: { retries: 0 },
    orders: ['health-first', 'drain-first'],
  },
  {
    key: 'resent',
    family: 'flush on DOWN, a refused connection re-sent',
    standsFor: 'HAProxy redispatch, NetScaler request retry, F5 reselect-tries',
    lb: { onMarkedDown: 'shutdown-sessions', redispatch: true },
    orders: ['health-first', 'drain-first'],
  },
  {
    key: 'signal',
    family: 'a graceful signal, flush on DOWN, a refused connection lost',
    standsFor: 'HAProxy disable-on-404, NetScaler TROFS, F5 recv-disable',
    lb: { disableOn404: true, onMarkedDown: 'shutdown-sessions', retries: 0 },
    orders: ['soft-drain', 'health-first', 'drain-first'],
  },
];

/** One family's run of one order: S5's steady load, one pod leaves, the order forced (spec.sequence). */
function orderRun(f: OrderFamily, order: Sequence, seed: number): ScenarioConfig {
  return {
    scenario: 'orders',
    title: `${order} behind ${f.family}`,
    setting: { label: f.family, lb: f.lb, sequence: order },
    termination: 'gracegate',
    pods: 2,
    load: { steady: steady(seed) },
    leaveAtMs: 1500,
  };
}

/** Every family, every order. */
export const ORDER_RUNS: Array<{ family: OrderFamily; order: Sequence; cfg: ScenarioConfig }> = ORDER_FAMILIES.flatMap((family, i) =>
  family.orders.map((order, j) => ({ family, order, cfg: orderRun(family, order, 80 + 4 * i + j) })),
);

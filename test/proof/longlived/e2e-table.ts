/**
 * The end-to-end part of the per-kind table (issue 16): one pod leaves under S5's steady load with
 * reconnecting WebSocket and SSE clients (test/proof/harness/long-lived.ts) through real HAProxy to
 * real Envoy pods with the real hc sidecar, once per termination:
 *
 *   seed            the article order (keep accepting, poll in-flight up to the drain timeout, then 503)
 *   gracegate       gracegate's sequence without spec.traffic.longLived (the behaviour before the plan)
 *   gracegate-plan  gracegate with spec.traffic.longLived and its bound (the pods' Envoys rotate streams)
 *   gracegate-plan-flush  the same behind HAProxy's on-marked-down shutdown-sessions (drain-first)
 *
 * What a run records, per kind: messages lost (gaps) and repeated, the reconnects the termination
 * caused (streams on the leaving pod that ended after its start), how those streams ended (the
 * cause and what the client saw), the longest a message came late; and the drain: from its start
 * to in-flight 0, or to the timeout.
 */
import type { LongLivedClientKind } from '../harness/long-lived';
import type { CloseCause } from '../harness/long-lived-report';
import { proxyLabel, type ProxyChoice } from '../harness/proxies';
import { LB_SETTINGS, runScenario, type ScenarioConfig, type ScenarioRun } from '../harness/scenario';
import { ROLLING_LONG_LIVED, S5_LONG_LIVED, S5_LONG_LIVED_SEED, S5_LONG_LIVED_UNPLANNED } from '../harness/scenarios';

export const E2E_SEQUENCES = ['seed', 'gracegate', 'gracegate-plan', 'gracegate-plan-flush', 'gracegate-plan-rolling'] as const;
export type E2eSequence = (typeof E2E_SEQUENCES)[number];

export const E2E_CONFIGS: Record<E2eSequence, ScenarioConfig> = {
  seed: S5_LONG_LIVED_SEED,
  gracegate: S5_LONG_LIVED_UNPLANNED,
  'gracegate-plan': S5_LONG_LIVED,
  'gracegate-plan-flush': { ...S5_LONG_LIVED, scenario: 'S5-long-lived-flush', setting: LB_SETTINGS.flushRedispatch },
  'gracegate-plan-rolling': ROLLING_LONG_LIVED,
};

/** One termination of a run: its streams and its drain (a rolling replacement has one per pod). */
export interface E2eTermination {
  readonly pod: string;
  readonly openAtStart: number;
  readonly reconnects: number;
  readonly endedBy: Partial<Record<CloseCause, number>>;
  readonly drainMs: number | null;
  readonly drainTimedOut: boolean | null;
}

export interface E2eKindResult {
  readonly kind: LongLivedClientKind;
  readonly clients: number;
  readonly lost: number;
  readonly duplicates: number;
  /** Streams of this kind on the leaving pod when its termination started. */
  readonly openAtStart: number;
  /** Reconnects the termination caused (streams on the leaving pod ended after its start). */
  readonly reconnects: number;
  /** How the streams on the leaving pod ended, by cause. */
  readonly endedBy: Partial<Record<CloseCause, number>>;
  /** What their clients saw (distinct), e.g. `close 1006`. */
  readonly seen: readonly string[];
  /** ms after the termination started, of each end of a stream on the leaving pod. */
  readonly endedAtMs: readonly number[];
  /** The longest any message of this kind arrived after it was due (ms). */
  readonly maxLateMs: number;
  /** Each of those streams: open, last message and close, ms after the termination started; its cause. */
  readonly streams: ReadonlyArray<{
    readonly openMs: number;
    readonly lastMsgMs: number | null;
    readonly closeMs: number;
    readonly how: string;
    readonly cause: CloseCause;
  }>;
}

export interface E2eRun {
  readonly sequence: E2eSequence;
  readonly envoy: string;
  readonly lb: string;
  readonly lbSetting: string;
  /** gracegate's sequence (health-first, drain-first, ...) or the article order. */
  readonly order: string;
  /** max_stream_duration the Envoys ran with (s), null without the plan. */
  readonly boundSeconds: number | null;
  readonly drainTimeoutSeconds: number;
  /** ms after the termination started. */
  readonly drain: { readonly startMs: number | null; readonly endMs: number | null; readonly timedOut: boolean };
  /** When the leaving pod's Envoy exited, ms after the termination started. */
  readonly proxyExitMs: number | null;
  readonly requests: number;
  readonly requestFailures: number;
  /** The first termination's pod, per kind (a rolling replacement: its first pod). */
  readonly kinds: readonly E2eKindResult[];
  /** Every termination of the run, all kinds together. */
  readonly terminations: readonly E2eTermination[];
}

/** The drain of the leaving pod, from the sidecar's proof (gracegate) or the baseline's marks (seed). */
function drainOf(run: ScenarioRun): E2eRun['drain'] {
  const term = run.terminations[0]!;
  const proof = run.result.proofs[0];
  if (proof) return { startMs: proof.drainStartMs, endMs: proof.zeroMs, timedOut: proof.drainTimedOut === true };
  const rel = (id: number) => {
    const m = term.marks.find((x) => x.id === id);
    return m ? m.atMs - term.startMs : null;
  };
  // The article order: [3] the drain call, [4] in-flight 0 if it came, else [1] the 503 after the timeout.
  const zero = rel(4);
  return { startMs: rel(3), endMs: zero ?? rel(1), timedOut: zero === null };
}

export function e2eRunOf(sequence: E2eSequence, run: ScenarioRun): E2eRun {
  const ll = run.longLived!;
  const term = run.terminations[0]!;
  const leaving = term.pod;
  // The long-lived report's times are already relative to the (first) termination's start.
  const t0 = term.startMs;
  const startRel = 0;
  const kinds = ll.kinds.map((kind): E2eKindResult => {
    const clients = ll.clients.filter((c) => c.kind === kind);
    const onPod = ll.sessions.filter((s) => s.kind === kind && s.pod === leaving && s.cause !== 'client-stop' && s.closeMs !== null && s.closeMs > startRel);
    const atStart = onPod.filter((s) => s.openMs < startRel);
    const endedBy: Partial<Record<CloseCause, number>> = {};
    for (const s of onPod) endedBy[s.cause] = (endedBy[s.cause] ?? 0) + 1;
    return {
      kind,
      clients: clients.length,
      lost: clients.reduce((n, c) => n + c.lost, 0),
      duplicates: clients.reduce((n, c) => n + c.duplicates, 0),
      openAtStart: atStart.length,
      reconnects: onPod.length,
      endedBy,
      seen: [...new Set(onPod.map((s) => s.how ?? '?'))],
      endedAtMs: onPod.map((s) => s.closeMs!),
      maxLateMs: Math.max(0, ...clients.map((c) => c.maxLateMs)),
      streams: onPod.map((x) => ({ openMs: x.openMs, lastMsgMs: x.lastMsgMs, closeMs: x.closeMs!, how: x.how ?? '?', cause: x.cause })),
    };
  });
  const exit = term.deletion?.containers.find((c) => c.name === 'istio-proxy')?.exitMs ?? null;
  return {
    sequence,
    envoy: run.result.proxy.replace(/^Envoy /, ''),
    lb: run.result.lb,
    lbSetting: run.result.lbSetting,
    order: run.result.sequence,
    boundSeconds: run.plan.longLived?.maxStreamDurationSeconds?.value ?? null,
    drainTimeoutSeconds: run.plan.timings.drainTimeoutSeconds,
    drain: drainOf(run),
    proxyExitMs: exit === null ? null : exit - t0,
    requests: run.result.requests,
    requestFailures: run.result.failureTotal,
    kinds,
    terminations: ll.terminations.map((t) => {
      const proof = run.result.proofs.find((p) => p.pod === t.pod);
      return {
        pod: t.pod,
        openAtStart: t.openAtStart,
        reconnects: t.reconnects,
        endedBy: t.endedBy,
        drainMs: proof && proof.zeroMs !== null && proof.drainStartMs !== null ? proof.zeroMs - proof.drainStartMs : null,
        drainTimedOut: proof ? proof.drainTimedOut : null,
      };
    }),
  };
}

export async function runE2e(sequence: E2eSequence, proxy: ProxyChoice): Promise<E2eRun> {
  const run = await runScenario(E2E_CONFIGS[sequence], proxy);
  const r = e2eRunOf(sequence, run);
  if (r.proxyExitMs === null && run.terminations[0]!.kind === 'seed') {
    // The seed baseline stops the containers itself: its Envoy's exit is the pod's proxy exit.
    const exited = run.terminations[0]!.endMs - run.terminations[0]!.startMs;
    return { ...r, proxyExitMs: exited };
  }
  return r;
}

export const e2eLabel = (proxy: ProxyChoice): string => proxyLabel(proxy);

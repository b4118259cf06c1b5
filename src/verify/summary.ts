/**
 * What a `gracegate verify` run measured, from its request records alone (pure): every failed
 * request classified and placed on the termination's clock, the counts, and the verdict against
 * the plan's predicted loss.
 */
import type { RequestRecord } from './load';

/**
 * The user's names for what a client saw: `refused` (nothing listened), `reset` (the connection
 * was closed under the request before an answer), `http-NNN` (an answer with that status),
 * `truncated` (a 200 whose body broke off), `timeout` (no end within the request timeout),
 * `error-CODE` (anything else the socket said, e.g. error-EPIPE).
 */
export type FailureKind = 'refused' | 'reset' | 'truncated' | 'timeout' | `http-${number}` | `error-${string}`;

/** The load generator's outcome (ECONNRESET, the harness's name) under the user's name (reset); null for ok and cancelled. */
export function failureKind(outcome: RequestRecord['outcome']): FailureKind | null {
  switch (outcome) {
    case 'ok':
    case 'cancelled':
      return null;
    case 'ECONNREFUSED':
      return 'refused';
    case 'ECONNRESET':
      return 'reset';
    default:
      return outcome;
  }
}

export type FailedRequest = {
  kind: FailureKind;
  /** The request's start and end, ms after the termination command started (negative: before it). */
  startMs: number;
  endMs: number;
  path: string;
  reusedConnection: boolean;
  /** Streams: chunks received of those expected. */
  chunks?: { received: number; expected: number };
};

export type Prediction = {
  /** The plan's findings that predict a loss, with the loss each predicts; empty: the plan predicts none. */
  findings: Array<{ id: string; expectedLoss: string }>;
  /**
   * What the LB model expects the plan's order to lose per pod termination at the plan's traffic
   * (src/plan/order-choice.ts): the scale a measured loss is read against; absent without one.
   */
  expected?: { order: string; lostPerTermination: number; requestsPerSecondPerPod: number };
} | null;

export type Verdict = {
  /** pass: nothing lost; loss: something lost that the plan does not predict (or no plan given); predicted: the plan's findings predict a loss and there was one. */
  status: 'pass' | 'loss' | 'predicted';
  text: string;
};

export type VerifySummary = {
  requests: number;
  ok: number;
  failures: number;
  failuresByKind: Record<string, number>;
  /** Requests Ctrl-C ended (the load's doing, not the target's): neither ok nor failed. */
  cancelled: number;
  failed: FailedRequest[];
  verdict: Verdict;
};

const pathOf = (r: RequestRecord, paths: { slow: (ms: number) => string; stream: (c: number, i: number) => string }): string =>
  r.spec.kind === 'slow' ? paths.slow(r.spec.ms) : paths.stream(r.spec.chunks, r.spec.intervalMs);

/** The verdict: 0 expected unless the plan's findings predict a loss. */
export function verdictOf(failures: number, prediction: Prediction): Verdict {
  if (failures === 0) return { status: 'pass', text: 'no request failed' };
  if (prediction === null) return { status: 'loss', text: `${failures} request(s) failed; no --spec given, so none was expected` };
  const model = prediction.expected
    ? `; the LB model expects ${prediction.expected.order} to lose ${prediction.expected.lostPerTermination.toFixed(2)} per pod termination at ${prediction.expected.requestsPerSecondPerPod} requests/s per pod`
    : '';
  if (prediction.findings.length === 0) return { status: 'loss', text: `${failures} request(s) failed where the plan predicts no loss${model}` };
  return {
    status: 'predicted',
    text: `${failures} request(s) failed; the plan predicts a loss: ${prediction.findings.map((f) => `${f.id} (${f.expectedLoss})`).join('; ')}${model}`,
  };
}

/** Counts and classifies `records`, each time relative to `t0` (epoch ms: when the termination command started). */
export function summarize(
  records: readonly RequestRecord[],
  t0: number,
  paths: { slow: (ms: number) => string; stream: (c: number, i: number) => string },
  prediction: Prediction,
): VerifySummary {
  const failuresByKind: Record<string, number> = {};
  const failed: FailedRequest[] = [];
  let ok = 0;
  let cancelled = 0;
  for (const r of [...records].sort((a, b) => a.startMs - b.startMs)) {
    if (r.outcome === 'cancelled') {
      cancelled++;
      continue;
    }
    const kind = failureKind(r.outcome);
    if (kind === null) {
      ok++;
      continue;
    }
    failuresByKind[kind] = (failuresByKind[kind] ?? 0) + 1;
    failed.push({
      kind,
      startMs: r.startMs - t0,
      endMs: r.endMs - t0,
      path: pathOf(r, paths),
      reusedConnection: r.reusedConnection,
      ...(r.chunks ? { chunks: r.chunks } : {}),
    });
  }
  const failures = failed.length;
  return { requests: ok + failures, ok, failures, failuresByKind, cancelled, failed, verdict: verdictOf(failures, prediction) };
}

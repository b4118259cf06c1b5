/** Helpers for the e2e assertions: say what a run measured when one fails, and sort its losses. */
import type { RequestRecord } from './load';
import type { ScenarioRun } from './scenario';

/**
 * How close to a DOWN a failure must start and end to be the connect race. On loopback a refused
 * connect takes well under a millisecond; the slack is for the harness reading HAProxy's DOWN line.
 */
export const DOWN_RACE_WINDOW_MS = 50;

/** At most this many connect-race cuts per DOWN (4 in 288 runs measured, never 2 at once; more means something else). */
export const MAX_CUTS_PER_DOWN = 2;

/**
 * A reset this soon after the request went out came before any answer could (the shortest request
 * in the mix takes 50 ms): the connection was closed under the request, it did not break a reply.
 */
export const NO_ANSWER_MS = 20;

/** At most this many keep-alive races per pod termination (10 in 288 runs measured, never 2 in one). */
export const MAX_KEEPALIVE_RACES_PER_TERMINATION = 1;

export type FailureClasses = {
  /**
   * The planner's `drain-first-cuts-connects-at-down`: a reset that started and ended within a few
   * ms of a DOWN. The request was still being connected when the flush came, so it never ran on
   * the pod; a request the pod was serving would have started long before (the pod refuses
   * everything new while draining).
   */
  cutAtDown: RequestRecord[];
  /**
   * HTTP/1's keep-alive race, one hop in: the draining pod closed a connection at the instant
   * HAProxy sent this client's next request on it, and HAProxy closed the client connection without
   * an answer, as a server of its own would in the same race. In 6 of the 7 cases we traced the
   * response before had begun before the drain, so Envoy (HCM "closing", after its drain_timeout)
   * closed the connection unannounced right after it; in 1 the response carried Connection: close.
   * Evidence: the client reused its connection, was reset before any answer, and HAProxy logged
   * that connection's previous request as ending within NO_ANSWER_MS before this one started.
   */
  keepAliveRace: RequestRecord[];
  other: RequestRecord[];
};

/** What the classification reads of a run: its requests, HAProxy's DOWNs and log, the termination start. */
export type RaceEvidence = Pick<ScenarioRun, 'records' | 'downs' | 'haproxyLog'> & { terminations: ReadonlyArray<{ startMs: number }> };

/** Sorts a run's failures into the two explained races and the rest, which the tests hold at zero. */
export function classifyFailures(run: RaceEvidence): FailureClasses {
  const t0 = run.terminations[0]?.startMs ?? 0;
  const out: FailureClasses = { cutAtDown: [], keepAliveRace: [], other: [] };
  for (const r of run.records) {
    if (r.outcome === 'ok') continue;
    const start = r.startMs - t0;
    const end = r.endMs - t0;
    const reset = r.outcome === 'ECONNRESET';
    if (reset && run.downs.some((d) => start >= d.atMs - DOWN_RACE_WINDOW_MS && end <= d.atMs + DOWN_RACE_WINDOW_MS)) {
      out.cutAtDown.push(r);
    } else if (reset && r.reusedConnection && end - start <= NO_ANSWER_MS && previousEndedJustBefore(run, r.clientPort, start)) {
      out.keepAliveRace.push(r);
    } else {
      out.other.push(r);
    }
  }
  return out;
}

/** HAProxy's log lines for one client connection (by the client's port), oldest first. */
function loggedFor(run: Pick<ScenarioRun, 'haproxyLog'>, clientPort: number): ScenarioRun['haproxyLog'] {
  return run.haproxyLog.filter((l) => l.clientPort === clientPort);
}

function previousEndedJustBefore(run: RaceEvidence, clientPort: number | null, startMs: number): boolean {
  if (clientPort === null) return false;
  const previous = loggedFor(run, clientPort).filter((l) => l.atMs <= startMs + NO_ANSWER_MS).at(-1);
  return previous !== undefined && previous.atMs >= startMs - NO_ANSWER_MS;
}

/** Streams that lost chunks, apart from the requests the races already account for (they got nothing). */
export function truncatedStreamsBesides(run: Pick<ScenarioRun, 'records'>, raced: readonly RequestRecord[]): RequestRecord[] {
  const excused = new Set(raced);
  return run.records.filter((x) => x.chunks !== undefined && x.chunks.received !== x.chunks.expected && !excused.has(x));
}

/** One paragraph with everything a failing assertion needs: result, events, termination log. */
export function describeRun(run: ScenarioRun): string {
  const r = run.result;
  const t0 = run.terminations[0]?.startMs ?? 0;
  return [
    `${r.scenario} ${r.sequence} behind ${r.lbSetting}: ${r.requests} requests, failures ${JSON.stringify(r.failures)}, HAProxy ${JSON.stringify(r.haproxy)}, chunks ${JSON.stringify(r.chunks)}`,
    ...r.events.map((e) => `  [${e.id}] ${e.name}: ${e.atMs === null ? '-' : `${e.atMs} ms`} (${e.source}${e.note ? `; ${e.note}` : ''})`),
    ...run.terminations.flatMap((t) => t.detail.map((d) => `  ${d}`)),
    ...run.records.filter((x) => x.outcome !== 'ok').slice(0, 10).flatMap((x) => [
      `  failed: ${JSON.stringify(x.spec)} ${x.outcome} at ${x.startMs - t0}..${x.endMs - t0} ms, client port ${x.clientPort ?? '-'}${x.reusedConnection ? ' (reused keep-alive connection)' : ''}`,
      // what HAProxy logged on that client connection: the request before shows how it ended
      ...(x.clientPort === null ? [] : loggedFor(run, x.clientPort).filter((l) => l.atMs <= x.endMs - t0 + NO_ANSWER_MS).slice(-3).map((l) => `    HAProxy at ${l.atMs} ms: ${l.text}`)),
    ]),
    ...run.haproxyLog.filter((l) => !l.terminationState.startsWith('--')).slice(0, 10).map((l) => `  HAProxy ended abnormally, at ${l.atMs} ms: ${l.text}`),
  ].join('\n');
}

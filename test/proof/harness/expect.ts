/**
 * What the e2e assertions hold a run to: that the gracegate sequence really ran (sequenceProblems),
 * how its failures sort into the two explained races (classifyFailures), and a readable account of
 * a run for a failing assertion (describeRun).
 */
import type { Plan } from '../../../src/plan/plan-gateway';
import { raceAllowance, type RaceKind } from './allowances';
import { loggedFrom, type PodEnvoyLog } from './envoy-log';
import type { RequestLogLine } from './haproxy';
import type { RequestRecord } from '../../../src/verify/load';
import { describeStops, inFlightAcross } from './machine-stops';
import type { SequenceProof } from './result';
import type { LbEvent, ScenarioRun } from './scenario';
import type { TerminationLog } from './terminations';

/**
 * How close to the leaving pod's DOWN a reset must start and end to be the connect race. On
 * loopback a refused connect takes well under a millisecond; the slack is for the harness reading
 * HAProxy's DOWN line from its stderr.
 */
export const DOWN_RACE_WINDOW_MS = 50;

/**
 * A reset this soon after the request went out came before any answer could (the shortest request
 * in the mix takes 50 ms): the connection was closed under the request, it did not break a reply.
 */
export const NO_ANSWER_MS = 20;

/** HAProxy logs dates and durations in whole milliseconds: a time read from its log can be this far off. */
export const LOG_CLOCK_SLACK_MS = 2;

/** A pod's [4] in-flight 0 contradicted by HAProxy's log: a response it served ended later than the relay explains. */
export function zeroBeforeLastServed(p: Pick<SequenceProof, 'zeroMs' | 'lastServedEndMs' | 'relaySlackMs'>): boolean {
  return p.zeroMs !== null && p.lastServedEndMs !== null && p.zeroMs + LOG_CLOCK_SLACK_MS + (p.relaySlackMs ?? 0) < p.lastServedEndMs;
}

export type FailureClasses = {
  /**
   * The planner's `drain-first-cuts-connects-at-down`: a reset that started and ended within
   * DOWN_RACE_WINDOW_MS of the DOWN of a pod that was leaving. The request was still being
   * connected when the flush came, so it never ran on the pod; a request the pod was serving would
   * have started long before (the pod refuses everything new while draining).
   */
  cutAtDown: RequestRecord[];
  /**
   * HTTP/1's keep-alive race, one hop in: the draining pod closed a connection at the instant
   * HAProxy sent this client's next request on it, and HAProxy closed the client connection without
   * an answer, as a server of its own would in the same race. Evidence: the client reused its
   * connection, was reset within NO_ANSWER_MS, and HAProxy's log shows the previous request on that
   * client connection ending (on HAProxy's clock) before this one started, and at most NO_ANSWER_MS
   * before. Or drain-first-listener-close-reset: a reset of a request sent while a leaving pod's
   * Envoy was closing its listeners (duringListenerClose) that never reached a pod (neverReachedAPod).
   */
  keepAliveRace: RequestRecord[];
  other: RequestRecord[];
};

/** What the classification reads of a run: its requests, HAProxy's DOWNs and log, which pods left and when. */
export type RaceEvidence = {
  records: readonly RequestRecord[];
  downs: ReadonlyArray<Pick<LbEvent, 'atMs' | 'server'>>;
  lbLog: readonly RequestLogLine[];
  terminations: ReadonlyArray<{ startMs: number; server: string }>;
  /** The leaving pods' proofs: when each one's proxy drain [3] started and the sidecar saw its drain calls answered (ms after t0). */
  result?: { proofs: ReadonlyArray<Pick<SequenceProof, 'server' | 'drainStartMs' | 'drainAckedMs'>> };
  /** What every pod's Envoy logged of the requests it served (harness/envoy-log.ts), where the run has it. */
  envoys?: readonly PodEnvoyLog[];
};

/**
 * drain-first-listener-close-reset's window: a connect made this close to a leaving pod's proxy
 * drain [3] can complete in the kernel's backlog as Envoy closes the listen socket, and be reset;
 * and Envoy's workers close their listen sockets this soon after Envoy answered the drain calls.
 */
export const LISTENER_CLOSE_WINDOW_MS = 50;

/**
 * The reset could be the listener close's: sent before the listeners can have closed, and back
 * after the drain [3] began. Envoy closes them while it handles the sidecar's drain calls, so they
 * closed by the sidecar's record of the answer (drainAckedMs; [3] when it has none) plus
 * LISTENER_CLOSE_WINDOW_MS: a window the run measures, not a fixed one around [3] (under load the
 * answer came 143 ms after [3]: the sidecar fsyncs its state file before it calls, and its own
 * event loop lags). The client stamps a request's start before it sends it and its end after the
 * reset reached it, so however late its loop ran, the request went out no earlier than `start`
 * and the reset came no later than `end`.
 */
function duringListenerClose(p: Pick<SequenceProof, 'drainStartMs' | 'drainAckedMs'>, start: number, end: number): boolean {
  if (p.drainStartMs === null) return false;
  return start <= (p.drainAckedMs ?? p.drainStartMs) + LISTENER_CLOSE_WINDOW_MS && end >= p.drainStartMs;
}

/**
 * The request never reached a pod, so no pod was serving it: no pod's Envoy logged a request from
 * its client connection between its start and its end (a client connection carries one request at
 * a time), and no Envoy died meanwhile (one killed holding it logs nothing). Without the pods' logs
 * (a front Envoy LB, a run on the cluster): the reset came sooner than any answer could, and the
 * request went out at most LISTENER_CLOSE_WINDOW_MS before the drain.
 */
function neverReachedAPod(run: RaceEvidence, r: RequestRecord, p: Pick<SequenceProof, 'drainStartMs'>, start: number, end: number): boolean {
  if (!run.envoys) return end - start < noAnswerBefore(r) && p.drainStartMs !== null && start >= p.drainStartMs - LISTENER_CLOSE_WINDOW_MS;
  if (r.clientPort === null) return false;
  const died = run.envoys.some((e) => e.diedAtMs !== null && e.diedAtMs >= start && e.diedAtMs <= end);
  return !died && loggedFrom(run.envoys, r.clientPort, start - LOG_CLOCK_SLACK_MS, end + LOG_CLOCK_SLACK_MS).length === 0;
}

/** The least time the request takes to be answered at all: a reset sooner came before any answer. */
function noAnswerBefore(r: RequestRecord): number {
  return Math.max(NO_ANSWER_MS, r.spec.kind === 'slow' ? r.spec.ms : r.spec.intervalMs);
}

/** HAProxy's log lines for one client connection (by the client's port), in the order HAProxy saw the requests. */
export function loggedFor(log: readonly RequestLogLine[], clientPort: number): RequestLogLine[] {
  return log.filter((l) => l.clientPort === clientPort).sort((a, b) => a.startMs - b.startMs);
}

/** The request before the one that started at `startMs` on the same client connection, as HAProxy logged it. */
function previousOnConnection(log: readonly RequestLogLine[], clientPort: number | null, startMs: number): RequestLogLine | undefined {
  if (clientPort === null) return undefined;
  return loggedFor(log, clientPort)
    .filter((l) => l.startMs < startMs - LOG_CLOCK_SLACK_MS)
    .at(-1);
}

/** Sorts a run's failures into the two explained races and the rest, which the tests hold at zero. */
export function classifyFailures(run: RaceEvidence): FailureClasses {
  const t0 = run.terminations[0]?.startMs ?? 0;
  const leaving = new Set(run.terminations.map((t) => t.server));
  const leavingDowns = run.downs.filter((d) => leaving.has(d.server));
  const out: FailureClasses = { cutAtDown: [], keepAliveRace: [], other: [] };
  for (const r of run.records) {
    if (r.outcome === 'ok') continue;
    const start = r.startMs - t0;
    const end = r.endMs - t0;
    const reset = r.outcome === 'ECONNRESET';
    const previous = previousOnConnection(run.lbLog, r.clientPort, start);
    if (reset && leavingDowns.some((d) => start >= d.atMs - DOWN_RACE_WINDOW_MS && end <= d.atMs + DOWN_RACE_WINDOW_MS)) {
      out.cutAtDown.push(r);
    } else if (
      reset &&
      r.reusedConnection &&
      end - start <= NO_ANSWER_MS &&
      previous !== undefined &&
      previous.endMs <= start + LOG_CLOCK_SLACK_MS &&
      previous.endMs >= start - NO_ANSWER_MS
    ) {
      out.keepAliveRace.push(r);
    } else if (
      reset &&
      (run.result?.proofs ?? []).some((p) => leaving.has(p.server) && duringListenerClose(p, start, end) && neverReachedAPod(run, r, p, start, end))
    ) {
      // The same face, one hop in: the connect for it reset by the listener close at the drain.
      out.keepAliveRace.push(r);
    } else {
      out.other.push(r);
    }
  }
  return out;
}

/** HAProxy's line for a request: on its client connection, begun while the request was out (times relative to t0). */
function lbLineOf(run: Pick<ScenarioRun, 'lbLog'>, t0: number, r: RequestRecord): RequestLogLine | undefined {
  if (r.clientPort === null) return undefined;
  const start = r.startMs - t0;
  const end = r.endMs - t0;
  return loggedFor(run.lbLog, r.clientPort).find((l) => l.startMs >= start - LOG_CLOCK_SLACK_MS && l.startMs <= end + LOG_CLOCK_SLACK_MS);
}

/**
 * The planner's `drain-first-without-redispatch` loss, and nothing else: an HTTP 503 that HAProxy
 * logged on a leaving pod's server at the connect phase, `SC` (the connect was refused on every
 * retry) or `DC` (the flush at DOWN ended it while HAProxy was still retrying), for a request that
 * started after that pod's proxy drain began and before its DOWN.
 */
export function isRefusedConnect(run: Pick<ScenarioRun, 'lbLog'> & { result: { proofs: readonly SequenceProof[] } }, t0: number, r: RequestRecord): boolean {
  if (r.outcome !== 'http-503') return false;
  const start = r.startMs - t0;
  const line = lbLineOf(run, t0, r);
  if (!line || line.status !== 503 || !/^[SD]C/.test(line.terminationState)) return false;
  const proof = run.result.proofs.find((p) => p.server === line.server);
  return (
    proof !== undefined &&
    proof.drainStartMs !== null &&
    proof.lbDownMs !== null &&
    start >= proof.drainStartMs &&
    start <= proof.lbDownMs + DOWN_RACE_WINDOW_MS
  );
}

/** No termination of `server` had begun by `endMs` (relative to t0): the pod there was not leaving. */
function notLeavingBy(run: Pick<ScenarioRun, 'terminations'>, t0: number, server: string, endMs: number): boolean {
  return !run.terminations.some((t) => t.server === server && t.startMs - t0 <= endMs);
}

/**
 * Started before the first termination, and HAProxy logged it on a server whose termination (if it
 * has one) started only after the request had ended.
 */
export function failedBeforeItsPodLeft(run: Pick<ScenarioRun, 'lbLog' | 'terminations'>, t0: number, r: RequestRecord): boolean {
  if (r.startMs >= t0) return false;
  const line = lbLineOf(run, t0, r);
  if (!line || line.server === '') return false;
  return notLeavingBy(run, t0, line.server, r.endMs - t0);
}

/**
 * A late answer from a pod the sequence did not touch: HAProxy's `timeout server` expired before the
 * response's headers (termination state `sH`, a 504) on a server that had answered a request begun
 * before the first termination (an old pod, not one the rollout started: the start half's late
 * answers stay losses) and whose own termination, if it has one, began only after the request ended.
 * The request was neither cut nor refused: the pod was slow, as a loaded machine makes any pod (a
 * 2 s request met the lab's 4 s server timeout on the cluster at load average 6 on 2 cores,
 * docs/flakes.md). Not the sequence's loss; the run's log still lists it.
 */
export function slowAnswerOffTheSequence(run: Pick<ScenarioRun, 'lbLog' | 'terminations'>, t0: number, r: RequestRecord): boolean {
  if (r.outcome !== 'http-504') return false;
  const line = lbLineOf(run, t0, r);
  if (!line || line.server === '' || !line.terminationState.startsWith('sH')) return false;
  const servedBefore = run.lbLog.some((l) => l.server === line.server && l.startMs < 0 && l.terminationState.startsWith('--'));
  return servedBefore && notLeavingBy(run, t0, line.server, r.endMs - t0);
}

/** Where HAProxy says a failed request went, for the problem's own line (the tail of a CI log keeps it). */
function whereLogged(run: Pick<ScenarioRun, 'lbLog'>, t0: number, r: RequestRecord): string {
  const line = lbLineOf(run, t0, r);
  if (!line) return ' (no HAProxy line)';
  const timers = line.serverMs === undefined ? '' : `, Tr ${line.serverMs} ms`;
  return ` (on ${line.server || 'no server'}, ${line.terminationState}${timers}${line.path ? ` ${line.path}` : ''})`;
}

/**
 * The answered request that came latest against its own length (a slow request's ms), and where
 * HAProxy sent it: how near the run came to the LB's server timeout on pods merely slow.
 */
export function latestAnswer(run: Pick<ScenarioRun, 'records' | 'lbLog' | 'terminations'>): { lateMs: number; server: string } | null {
  const t0 = run.terminations[0]?.startMs ?? 0;
  let latest: { lateMs: number; r: RequestRecord } | null = null;
  for (const r of run.records) {
    if (r.outcome !== 'ok' || r.spec.kind !== 'slow') continue;
    const lateMs = r.endMs - r.startMs - r.spec.ms;
    if (latest === null || lateMs > latest.lateMs) latest = { lateMs, r };
  }
  return latest && { lateMs: latest.lateMs, server: lbLineOf(run, t0, latest.r)?.server ?? '-' };
}

/** Streams that lost chunks, apart from the requests the races already account for (they got nothing). */
export function truncatedStreamsBesides(run: Pick<ScenarioRun, 'records'>, raced: readonly RequestRecord[]): RequestRecord[] {
  const excused = new Set(raced);
  return run.records.filter((x) => x.chunks !== undefined && x.chunks.received !== x.chunks.expected && !excused.has(x));
}

/**
 * Everything lost in a run that the plan does not account for; empty when the loss is what its
 * findings predict, within the measured allowances. A race only counts as explained where the plan
 * predicts it (finding `drain-first-cuts-connects-at-down`, `keepalive-race-not-retried` or
 * `drain-first-listener-close-reset`), a 503
 * only where it predicts refused connections (`drain-first-without-redispatch`); anything else is
 * a loss. `allowance` defaults to the measured rates (harness/allowances.ts).
 */
export function lossProblems(run: ScenarioRun, allowance: (kind: RaceKind, terminations: number) => number = (kind, n) => raceAllowance(kind, n)): string[] {
  const predicts = (id: string): boolean => run.plan.findings.some((f) => f.id === id);
  const t0 = run.terminations[0]?.startMs ?? 0;
  const n = run.terminations.length;
  const { cutAtDown, keepAliveRace, other } = classifyFailures(run);
  const out: string[] = [];
  const race = (kind: RaceKind, found: RequestRecord[], ...findings: string[]): void => {
    if (found.length === 0) return;
    if (!findings.some(predicts)) out.push(`${found.length} ${kind} where the plan predicts none (no finding ${findings.join(' or ')})`);
    else if (found.length > allowance(kind, n))
      out.push(`${found.length} ${kind} over ${n} termination(s), above the measured allowance of ${allowance(kind, n)}`);
  };
  race('cutAtDown', cutAtDown, 'drain-first-cuts-connects-at-down');
  // The same face, two causes: a pooled connection to the pod closed under a request
  // (keepalive-race-not-retried), or a connect reset by the listener close at the drain
  // (drain-first-listener-close-reset, behind http-server-close).
  race('keepAliveRace', keepAliveRace, 'keepalive-race-not-retried', 'drain-first-listener-close-reset');
  // Refused connects fail where the LB does not re-send them, or (several pods draining at once,
  // autoscale-drain-first-overlap) where it re-sends one to another leaving pod.
  const refused =
    predicts('drain-first-without-redispatch') || predicts('autoscale-drain-first-overlap') ? other.filter((r) => isRefusedConnect(run, t0, r)) : [];
  // A request that started before the first termination and failed on a pod whose own termination
  // had not begun by its end (on a loaded machine: HAProxy's server timeout, sH, on a slow answer)
  // is not the sequence's loss: nothing had left yet. Nor is a late answer from an old pod that was
  // not leaving when it failed.
  const offTheSequence = other.filter((r) => failedBeforeItsPodLeft(run, t0, r) || slowAnswerOffTheSequence(run, t0, r));
  // In flight across a stop of the machine itself (machine-stops.ts): the stop's, not the sequence's.
  const acrossStop = run.records.filter((r) => inFlightAcross(r, run.machineStops));
  const explained = new Set([...refused, ...offTheSequence, ...acrossStop]);
  const unexplained = other.filter((r) => !explained.has(r));
  if (unexplained.length > 0)
    out.push(
      `${unexplained.length} failure(s) no finding of the plan explains: ${unexplained
        .slice(0, 5)
        .map((r) => `${r.label ?? r.spec.kind} ${r.outcome} at ${r.startMs - t0}..${r.endMs - t0} ms${whereLogged(run, t0, r)}`)
        .join('; ')}`,
    );
  if (refused.length > run.result.lbCounters.econ)
    out.push(`${refused.length} refused-connect 503s but HAProxy counted only ${run.result.lbCounters.econ} connection errors`);
  const truncated = truncatedStreamsBesides(run, [...cutAtDown, ...keepAliveRace, ...refused, ...acrossStop]);
  if (truncated.length > 0) out.push(`${truncated.length} stream(s) lost chunks`);
  if (run.plan.loadBalancer.cutsSessionsOnDown) {
    // Every session the flush at a leaving pod's DOWN found was a connect under way: cut, or
    // (without redispatch) still being retried and answered 503 later.
    const leaving = new Set(run.terminations.map((t) => t.server));
    const flushed = run.downs.filter((d) => leaving.has(d.server)).reduce((sum, d) => sum + d.sessionsActive, 0);
    if (flushed > cutAtDown.length + refused.length)
      out.push(
        `the flush at DOWN found ${flushed} session(s), more than the ${cutAtDown.length} connect(s) cut and ${refused.length} refused: it killed requests the pod was serving`,
      );
  }
  return out;
}

/** The first UP after the server's first NOLB or DOWN in these events (in order), null when none. */
export function upAgain(events: ReadonlyArray<{ state: string; atMs: number }>): number | null {
  const out = events.findIndex((e) => e.state === 'NOLB' || e.state === 'DOWN');
  return out < 0 ? null : (events.slice(out + 1).find((e) => e.state === 'UP')?.atMs ?? null);
}

const ms = (v: number | null | undefined): string => (v === null || v === undefined ? 'never' : `${Math.round(v)} ms`);

/**
 * Everything that says a gracegate termination did not run the sequence its plan promised; empty
 * when it did. Each check reads a witness other than the sidecar's say-so where one exists: the
 * hooks' own answers, the kubelet's signals, HAProxy's log and its clock.
 */
export function sequenceProblems(p: SequenceProof, sequence: Plan['sequence']): string[] {
  const out: string[] = [];
  const proxy = p.containers.find((c) => c.name === 'istio-proxy');
  if (p.finalState !== 'CLOSED') out.push(`the sidecar ended in ${p.finalState ?? '(no state file)'}, not CLOSED`);
  if (p.drainTimedOut !== false) out.push('the sequence ended on the drain timeout, not at in-flight 0');
  if (p.drainStartMs === null) out.push('event [3] (proxy drain starts) never happened');
  if (p.waitClosed?.status !== 200) out.push(`istio-proxy's preStop GET /wait-closed answered ${p.waitClosed?.text ?? 'nothing'}, not 200`);
  else if (p.closedMs === null || p.waitClosed.atMs < p.closedMs)
    out.push(`/wait-closed answered 200 at ${ms(p.waitClosed.atMs)}, before CLOSED (${ms(p.closedMs)}): the proxy hold was released early`);
  if (p.drainExit?.code !== 0) out.push(`the hc preStop gracegate drain ended with ${p.drainExit?.text ?? 'nothing'}, not exit 0`);
  if (!proxy) out.push('no istio-proxy container record');
  else if (p.closedMs !== null && proxy.sigtermMs < p.closedMs)
    out.push(`istio-proxy got SIGTERM at ${ms(proxy.sigtermMs)}, before CLOSED (${ms(p.closedMs)})`);
  const killed = p.containers.filter((c) => c.sigkillMs !== null);
  if (killed.length > 0) out.push(`SIGKILL at the grace period (${p.graceMs} ms) for ${killed.map((c) => c.name).join(', ')}`);
  // soft-drain's LB out is NOLB; DOWN follows at CLOSED unless a replacement pod on the same node
  // (the server is the node's NodePort) answered 200 first, after this pod's proxy had exited.
  const replacedOnNode = sequence === 'soft-drain' && p.lbNolbMs !== null && p.lbUpAgainMs != null && proxy !== undefined && p.lbUpAgainMs > proxy.exitMs;
  const lbOutMs = p.lbDownMs ?? (replacedOnNode ? p.lbNolbMs : null);
  if (lbOutMs === null) out.push(`HAProxy never marked ${p.server} DOWN`);
  else if (p.lastRequestStartMs <= lbOutMs)
    out.push(`the load stopped (last request at ${ms(p.lastRequestStartMs)}) before HAProxy took ${p.server} out (${ms(lbOutMs)})`);
  if (proxy && p.lastRequestStartMs <= proxy.exitMs)
    out.push(`the load stopped (last request at ${ms(p.lastRequestStartMs)}) before the proxy exited (${ms(proxy.exitMs)})`);
  // The LB buffer, on the LB's own record: the step it protects comes after the LB acted.
  if (sequence === 'drain-first' && p.closedMs !== null && p.lbDownMs !== null && p.closedMs < p.lbDownMs) {
    out.push(
      `CLOSED (readiness fails, the proxy is released) at ${ms(p.closedMs)}, before HAProxy marked ${p.server} DOWN (${ms(p.lbDownMs)}): the LB buffer did not cover detection`,
    );
  }
  if (sequence === 'health-first' && p.drainStartMs !== null && p.lbDownMs !== null && p.drainStartMs < p.lbDownMs) {
    out.push(`the proxy drain [3] started at ${ms(p.drainStartMs)}, before HAProxy marked ${p.server} DOWN (${ms(p.lbDownMs)}): the LB was still sending`);
  }
  if (sequence === 'soft-drain' && p.drainStartMs !== null && (p.lbNolbMs === null || p.drainStartMs < p.lbNolbMs)) {
    out.push(`the proxy drain [3] started at ${ms(p.drainStartMs)}, before HAProxy put ${p.server} in NOLB (${ms(p.lbNolbMs)}): the LB was still sending`);
  }
  // In-flight counted for real: zero is not reached before the last response the pod served ended.
  if (zeroBeforeLastServed(p)) {
    const relay = (p.relaySlackMs ?? 0) > 0 ? ` (beyond the ${p.relaySlackMs} ms the run's relay took at most)` : '';
    out.push(
      `[4] in-flight 0 at ${ms(p.zeroMs)}, but ${p.lastServedBy ?? 'HAProxy'} logged a response from ${p.server} ending at ${ms(p.lastServedEndMs)}${relay}`,
    );
  }
  return out;
}

/** sequenceProblems for every gracegate termination of a run, each line naming its pod. */
export function runSequenceProblems(run: Pick<ScenarioRun, 'result' | 'plan'>): string[] {
  return run.result.proofs.flatMap((p) => sequenceProblems(p, run.plan.sequence).map((x) => `${p.pod}: ${x}`));
}

/** One paragraph with everything a failing assertion needs: result, events, termination log. */
export function describeRun(run: ScenarioRun): string {
  const r = run.result;
  const t0 = run.terminations[0]?.startMs ?? 0;
  return [
    `${r.scenario} ${r.sequence} behind ${r.lbSetting} (${r.proxy} pods, ${r.lb}): ${r.requests} requests, failures ${JSON.stringify(r.failures)}, HAProxy ${JSON.stringify(r.lbCounters)}, chunks ${JSON.stringify(r.chunks)}`,
    ...r.events.map((e) => `  [${e.id}] ${e.name}: ${e.atMs === null ? '-' : `${e.atMs} ms`} (${e.source}${e.note ? `; ${e.note}` : ''})`),
    ...r.proofs.map((p) => `  ${p.pod} proof: ${JSON.stringify(p)}`),
    ...run.terminations.flatMap((t) => t.detail.map((d) => `  ${d}`)),
    ...(run.machineStops.length > 0 ? [`  ${describeStops(run.machineStops, t0)}`] : []),
    // Every state change the LB made in the run, any server's: a DOWN of a pod that was not leaving
    // is the first thing to read when requests failed on it.
    ...run.downs.filter((e) => e.reason !== undefined).map((e) => `  LB: ${e.server} ${e.state} at ${e.atMs} ms (${e.reason})`),
    ...run.records
      .filter((x) => x.outcome !== 'ok')
      .slice(0, 10)
      .flatMap((x) => [
        `  failed: ${x.label ?? JSON.stringify(x.spec)} ${x.outcome} at ${x.startMs - t0}..${x.endMs - t0} ms, client port ${x.clientPort ?? '-'}${x.reusedConnection ? ' (reused keep-alive connection)' : ''}`,
        // what HAProxy logged on that client connection: the request before shows how it ended
        ...(x.clientPort === null
          ? []
          : loggedFor(run.lbLog, x.clientPort)
              .filter((l) => l.startMs <= x.endMs - t0 + NO_ANSWER_MS)
              .slice(-3)
              .map((l) => `    HAProxy ${l.startMs}..${l.endMs} ms: ${l.text}`)),
        // and what the pods' Envoys logged of it (nothing: it never reached a pod)
        ...(x.clientPort === null || !run.envoys
          ? []
          : loggedFrom(run.envoys, x.clientPort, x.startMs - t0 - LOG_CLOCK_SLACK_MS, x.endMs - t0 + LOG_CLOCK_SLACK_MS).map(
              (e) => `    ${e.pod}'s Envoy ${e.startMs}..${e.endMs} ms: ${e.code} ${e.flags} ${e.details}`,
            )),
      ]),
    ...run.lbLog
      .filter((l) => !l.terminationState.startsWith('--'))
      .slice(0, 10)
      .map((l) => `  HAProxy ended abnormally, ${l.startMs}..${l.endMs} ms: ${l.text}`),
  ].join('\n');
}

/** What the LB's probes of the leaving pod met between the hc's exit and istio-proxy's, in ms and samples. */
export type HcStopView = { hcSigtermAfterProxyExitMs: number; refusedBeforeProxyExit: number; answeredBeforeProxyExit: number };

/**
 * The hc sidecar's stop against istio-proxy's, for a gracegate termination (docs/native-sidecar.md):
 * an ordinary hc gets SIGTERM when its own preStop returns, usually before Envoy has exited, and
 * the LB's probes are refused from its exit on; a native one gets SIGTERM only after istio-proxy exited
 * (KEP-753), so every probe before that is answered. Problems are what contradicts `kind`.
 */
export function hcStopProblems(t: TerminationLog, kind: 'native' | 'container'): { problems: string[]; view: HcStopView } {
  const stops = t.deletion?.containers ?? [];
  const hc = stops.find((c) => c.name === 'hc');
  const proxy = stops.find((c) => c.name === 'istio-proxy');
  if (!hc || !proxy || !t.lbAnswers)
    return {
      problems: ['no kubelet record of hc and istio-proxy, or no LB answers sampled'],
      view: { hcSigtermAfterProxyExitMs: NaN, refusedBeforeProxyExit: 0, answeredBeforeProxyExit: 0 },
    };
  const before = t.lbAnswers.filter((a) => a.atMs < proxy.exitMs);
  const view = {
    hcSigtermAfterProxyExitMs: hc.sigtermMs - proxy.exitMs,
    refusedBeforeProxyExit: before.filter((a) => a.answer === 'refused').length,
    answeredBeforeProxyExit: before.filter((a) => /^\d+$/.test(a.answer)).length,
  };
  const problems: string[] = [];
  if (kind === 'native') {
    if (hc.sigtermMs < proxy.exitMs) problems.push(`native hc got SIGTERM ${proxy.exitMs - hc.sigtermMs} ms before istio-proxy exited`);
    if (view.refusedBeforeProxyExit > 0) problems.push(`native hc: ${view.refusedBeforeProxyExit} LB probes refused before istio-proxy exited`);
  } else {
    // At its own preStop's end, whenever that is: `gracegate drain` returns 20-500 ms after
    // istio-proxy's hook under this machine's load, so the refused window before Envoy's exit is
    // measured (view), not asserted.
    if (!hc.preStop || hc.sigtermMs - hc.preStop.endMs > 5)
      problems.push(`ordinary hc: SIGTERM not at its preStop's end (${hc.preStop ? hc.sigtermMs - hc.preStop.endMs : '-'} ms after)`);
  }
  return { problems, view };
}

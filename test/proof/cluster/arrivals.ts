/**
 * The start half of a rollout, from its witnesses (start-witnesses.ts, witnesses.ts, HAProxy): for
 * each new pod, in order, when it appeared, when the sidecar first answered the LB 200, when the
 * pod turned Ready, when each Service's EndpointSlice listed it ready, when each NodePort's rule on
 * its node first led to it, when the LB marked its node UP, and the first request the LB sent
 * there. The window is the time the LB had the node UP while the node's traffic NodePort still
 * dropped (no local endpoint): positive, the LB sent the node traffic its rules could only drop
 * (issue 50). Where the rule led to the new pod before the UP, the window is that lead, negative;
 * where it led to a pod still leaving the node (kube-proxy serves a terminating pod while the node
 * has no ready one), 0: that traffic is served, by the leaving pod.
 *
 * And every failed request, assigned to a half and a cause: HAProxy's line for it (by the client's
 * port) names the server, so the node, and how HAProxy ended it; the node's leaving and arriving
 * pods say which half it fell in.
 */
import { READINESS_SEEN } from '../../../src/hc/machine';
import type { PersistedState } from '../../../src/hc/types';
import type { RequestRecord } from '../../../src/verify/load';
import { LOG_CLOCK_SLACK_MS, loggedFor } from '../harness/expect';
import { HAPROXY_CONNECT_TIMEOUT_MS, type RequestLogLine, type ServerEvent } from '../harness/haproxy';
import { nodeOfServer, serverOf } from './gateway';
import type { PodWatch, RuleWatch } from './start-witnesses';
import type { LogLine, SliceSample } from './witnesses';

/** A new pod's start, ms after the action (null: did not happen while watched). */
export type ArrivalTimeline = {
  pod: string;
  node: string;
  server: string;
  createdMs: number;
  /**
   * The API server: the pod bound to its node. A pod Pending for a node (one pod per node, an old pod
   * still leaving it) waits before this; from here on the time is the pod's own start.
   */
  scheduledMs: number | null;
  /** The sidecar's state history: Envoy answered (WARMING, where the sidecar has it), and the first 200 to the LB (OPEN). */
  hcWarmingMs: number | null;
  /** The sidecar's log: the kubelet's first readiness probe answered in WARMING (the start hold counts from it). */
  hcReadinessSeenMs: number | null;
  hcOpenMs: number | null;
  /** The API server: the pod's Ready condition True. */
  readyMs: number | null;
  /** The EndpointSlices: the pod first listed ready in the health Service's (null without one) and the gateway Service's. */
  healthSliceReadyMs: number | null;
  trafficSliceReadyMs: number | null;
  /** The node's kube-proxy rules: its health NodePort's chain (null without a health Service) and its traffic NodePort's chain first lead to the pod. */
  healthRuleMs: number | null;
  trafficRuleMs: number | null;
  /** How long the save that read the traffic rule took after the change was reported: the rule came within this much of trafficRuleMs. */
  trafficRuleReadMs: number | null;
  /** HAProxy: the node's server UP, and the first request it sent there after (how it ended). */
  lbUpMs: number | null;
  firstRequestMs: number | null;
  firstRequestState: string | null;
  /** HAProxy's connect time (%Tc) and connect retries (%rc) for that first request: a dropped SYN shows as a connect of a whole connect timeout and a retry. */
  firstRequestConnectMs: number | null;
  firstRequestRetries: number | null;
  /**
   * The node's traffic NodePort at the LB's UP (its rules' last sample by then): dropped (the defect),
   * leading to the new pod, or to another pod on the node (with one gateway pod per node, one still
   * leaving, which kube-proxy serves while the node has no ready one). Null: no UP, or no sample yet.
   */
  trafficAtUp: 'dropped' | 'new pod' | 'other pod' | null;
  /** What ended a positive window: the node's rules as sampled, or a request the LB connected at the first try (null: no positive window). */
  windowEndBy: 'the rules' | 'a request connected' | null;
  /** Requests HAProxy received for the node inside the window. */
  requestsInWindow: number;
  firstOkMs: number | null;
  /**
   * Positive: how long the LB had the node UP while its traffic NodePort still dropped (from the UP to
   * the rules' first sample leading it to a pod). Otherwise how long before the UP the traffic rule
   * led to the new pod; 0 where at the UP it led to another pod. Null: no UP or no rule seen.
   */
  windowMs: number | null;
};

export type StartWitnesses = {
  t0: number;
  /** The Services the LB's probe and traffic pass through (the health one: null with hostPort or the health port on the gateway's Service). */
  trafficService: string;
  healthService: string | null;
  pods: PodWatch;
  rules: RuleWatch;
  slices: readonly SliceSample[];
  /** HAProxy's state changes and request log, on its own clock (absolute ms). */
  lbEvents: readonly ServerEvent[];
  lbLog: readonly RequestLogLine[];
  /** The sidecar's state file of a pod (with the transitions its log has), and its log. */
  hcState: (pod: string) => PersistedState | undefined;
  hcLog: (pod: string) => readonly LogLine[];
};

/** When the sidecar logged the kubelet's readiness probe answered (its own clock), or null. */
function readinessSeenAt(log: readonly LogLine[]): number | null {
  for (const l of log) {
    try {
      const j = JSON.parse(l.text) as { msg?: string; time?: string };
      if (j.msg === READINESS_SEEN) return Date.parse(j.time ?? '');
    } catch {
      // not a JSON line
    }
  }
  return null;
}

function sliceReady(slices: readonly SliceSample[], service: string, pod: string): number | null {
  return slices.find((s) => s.service === service && s.endpoints.some((e) => e.pod === pod && e.ready === true))?.atMs ?? null;
}

/** A new pod's window: when it ended (absolute ms), how long after the LB's UP, and what ended it. */
type StartWindow = { endMs: number | null; ms: number | null; by: ArrivalTimeline['windowEndBy'] };

/**
 * The window ends where the node's NodePort is first seen leading somewhere: in its rules (the last
 * sample at the UP already, unless it dropped then; with no sample before the UP, the traffic
 * rule), or by a request the LB connected to the node at the first try (`connectEnd`). The rules'
 * times are `nft monitor`'s reports, which can come late under load; a connect that completed
 * proves the path at once (a dropped SYN holds a connect for HAProxy's whole timeout connect).
 * Where the NodePort led to the new pod at the UP, the window is the rule's lead (0 or less).
 */
function startWindow(a: {
  lbUp: number | null;
  trafficAtUp: ArrivalTimeline['trafficAtUp'];
  trafficRule: number | null;
  /** The first sample after the UP in which the NodePort leads to a pod. */
  rulesServe: (lbUp: number) => number | null;
  connectEnd: number | null;
}): StartWindow {
  if (a.lbUp === null) return { endMs: null, ms: null, by: null };
  const ruleEnd = a.trafficAtUp === 'dropped' ? a.rulesServe(a.lbUp) : a.trafficAtUp === null ? a.trafficRule : a.lbUp;
  const ends = [ruleEnd, a.connectEnd].filter((x): x is number => x !== null);
  if (ends.length === 0) return { endMs: null, ms: null, by: null };
  const endMs = Math.min(...ends);
  const ms = a.trafficAtUp === 'new pod' && a.trafficRule !== null ? Math.min(0, a.trafficRule - a.lbUp) : endMs - a.lbUp;
  return { endMs, ms, by: ms <= 0 ? null : endMs === a.connectEnd ? 'a request connected' : 'the rules' };
}

/** The timelines of the pods that were not there before the action (`before`: their names). */
export function arrivalTimelines(w: StartWitnesses, before: ReadonlySet<string>): ArrivalTimeline[] {
  const rel = (ms: number | null | undefined): number | null => (ms === null || ms === undefined ? null : ms - w.t0);
  const names = [...new Set(w.pods.samples.map((s) => s.pod))].filter((p) => !before.has(p));
  return names.flatMap((pod) => {
    const created = w.pods.first(pod);
    const placed = w.pods.first(pod, (s) => s.node !== '' && s.ip !== '');
    if (!created || !placed) return [];
    const { node, ip } = placed;
    const server = serverOf(node);
    const history = w.hcState(pod)?.history ?? [];
    const lbUp = w.lbEvents.find((e) => e.server === server && e.state === 'UP' && e.atMs >= created.atMs)?.atMs ?? null;
    const after = lbUp === null ? [] : w.lbLog.filter((l) => l.server === server && l.startMs >= lbUp).sort((a, b) => a.startMs - b.startMs);
    const traffic = w.rules.firstLeads(node, w.trafficService, ip, created.atMs);
    const trafficRule = traffic?.atMs ?? null;
    const atUp = lbUp === null ? null : w.rules.at(node, w.trafficService, lbUp);
    const trafficAtUp: ArrivalTimeline['trafficAtUp'] =
      atUp === null || atUp.kind === 'unknown' ? null : atUp.kind === 'dropped' ? 'dropped' : atUp.addresses.includes(ip) ? 'new pod' : 'other pod';
    const connected = after.find((l) => l.retries === 0 && l.connectMs !== undefined && l.connectMs >= 0 && l.connectMs < HAPROXY_CONNECT_TIMEOUT_MS);
    const win = startWindow({
      lbUp,
      trafficAtUp,
      trafficRule,
      rulesServe: (up) => w.rules.firstServes(node, w.trafficService, up)?.atMs ?? null,
      connectEnd: connected ? connected.startMs + (connected.connectMs ?? 0) : null,
    });
    return [
      {
        pod,
        node,
        server,
        createdMs: created.atMs - w.t0,
        scheduledMs: rel(w.pods.first(pod, (s) => s.node !== '')?.atMs),
        hcWarmingMs: rel(history.find((h) => h.state === 'WARMING')?.at),
        hcReadinessSeenMs: rel(readinessSeenAt(w.hcLog(pod))),
        hcOpenMs: rel(history.find((h) => h.state === 'OPEN')?.at),
        readyMs: rel(w.pods.first(pod, (s) => s.ready)?.atMs),
        healthSliceReadyMs: w.healthService === null ? null : rel(sliceReady(w.slices, w.healthService, pod)),
        trafficSliceReadyMs: rel(sliceReady(w.slices, w.trafficService, pod)),
        healthRuleMs: w.healthService === null ? null : rel(w.rules.firstLeads(node, w.healthService, ip, created.atMs)?.atMs),
        trafficRuleMs: rel(trafficRule),
        trafficRuleReadMs: traffic ? traffic.savedAtMs - traffic.atMs : null,
        lbUpMs: rel(lbUp),
        firstRequestMs: rel(after[0]?.startMs),
        firstRequestState: after[0]?.terminationState ?? null,
        firstRequestConnectMs: after[0]?.connectMs ?? null,
        firstRequestRetries: after[0]?.retries ?? null,
        trafficAtUp,
        windowEndBy: win.by,
        requestsInWindow: win.endMs === null ? after.length : after.filter((l) => l.startMs < win.endMs!).length,
        firstOkMs: rel(after.find((l) => l.terminationState === '----' && l.status < 500)?.startMs),
        windowMs: win.ms,
      },
    ];
  });
}

/** A leaving pod's span on its node (absolute ms): from its preStop hooks to its last container's exit. */
export type LeavingSpan = { pod: string; node: string; fromMs: number; toMs: number };

export type Half = 'termination' | 'start' | 'steady' | 'before-the-lb';

/** One failed request, where it went and why. */
export type AssignedFailure = {
  outcome: string;
  /** ms after the action. */
  startMs: number;
  endMs: number;
  server: string | null;
  terminationState: string | null;
  status: number | null;
  half: Half;
  cause: string;
};

/** HAProxy's termination state in words (its configuration manual, "Session state at disconnection"). */
export function causeOf(state: string | null, status: number | null): string {
  if (state === null)
    return 'HAProxy logged no request for it: the client connection to the LB itself failed (a keep-alive race with HAProxy closing an idle client connection)';
  const who = state[0];
  const phase = state[1];
  if (who === 's' && phase === 'C')
    return "the LB's connect to the node timed out: the node dropped the SYN (no ready local endpoint for the traffic NodePort)";
  if (who === 'S' && phase === 'C') return 'the connect was refused on every try (nothing listening: a drained or not yet listening Envoy)';
  if (who === 'S' && (phase === 'H' || phase === 'D'))
    return `the server side closed or reset the connection (${phase === 'H' ? 'before' : 'during'} the response)`;
  if (who === 's' && (phase === 'H' || phase === 'D')) return `the server timeout struck (${phase === 'H' ? 'no response headers' : 'mid-response'})`;
  if (who === 'K') return 'HAProxy killed the session (on-marked-down shutdown-sessions at DOWN)';
  if (who === 'D') return 'the session was cut at DOWN (on-marked-down shutdown-sessions)';
  if (who === 'C' || who === 'c') return `the client side ended it (${state})`;
  if (state === '----' && status !== null && status >= 500) return `answered ${status} by the pod (Envoy: no route or no upstream yet)`;
  return `HAProxy ended it ${state}${status === null ? '' : ` with ${status}`}`;
}

/**
 * Each failed request (not ok, not the load's own cancel) with HAProxy's line for it and its half:
 * the termination half when a pod of its node was leaving at its start, the start half when the
 * node's pod was a new one (and no old one was leaving there), steady otherwise; before the LB when
 * HAProxy logged nothing for it.
 */
export function assignFailures(
  records: readonly RequestRecord[],
  lbLog: readonly RequestLogLine[],
  t0: number,
  leaving: readonly LeavingSpan[],
  arrivals: readonly ArrivalTimeline[],
): AssignedFailure[] {
  return records.flatMap((r): AssignedFailure[] => {
    if (r.outcome === 'ok' || r.outcome === 'cancelled') return [];
    const line =
      r.clientPort === null
        ? undefined
        : loggedFor(lbLog, r.clientPort).find((l) => l.startMs >= r.startMs - LOG_CLOCK_SLACK_MS && l.startMs <= r.endMs + LOG_CLOCK_SLACK_MS);
    const base = { outcome: r.outcome, startMs: r.startMs - t0, endMs: r.endMs - t0 };
    if (!line) {
      // HAProxy never read it: the client's kept-alive connection closed under it. Where the request
      // before it on that connection was served by a pod that was leaving, the drain closed it.
      const previous =
        r.clientPort === null
          ? undefined
          : loggedFor(lbLog, r.clientPort)
              .filter((l) => l.startMs < r.startMs - LOG_CLOCK_SLACK_MS)
              .at(-1);
      const drained =
        previous &&
        leaving.find((l) => l.node === nodeOfServer(previous.server) && previous.endMs >= l.fromMs - LOG_CLOCK_SLACK_MS && previous.endMs <= l.toMs);
      return [
        drained
          ? {
              ...base,
              server: previous!.server,
              terminationState: null,
              status: null,
              half: 'termination' as const,
              cause: `the request before it on the same kept-alive connection was served by ${drained.pod}, leaving: the drain closed the connection under this one (HAProxy read nothing of it; the keep-alive race the plan names)`,
            }
          : { ...base, server: null, terminationState: null, status: null, half: 'before-the-lb' as const, cause: causeOf(null, null) },
      ];
    }
    const node = nodeOfServer(line.server);
    const old = leaving.find((l) => l.node === node && line.startMs >= l.fromMs - LOG_CLOCK_SLACK_MS && line.startMs <= l.toMs + LOG_CLOCK_SLACK_MS);
    const young = arrivals.find((a) => a.node === node && line.startMs - t0 >= a.createdMs);
    const half: Half = old ? 'termination' : young ? 'start' : 'steady';
    return [
      { ...base, server: line.server, terminationState: line.terminationState, status: line.status, half, cause: causeOf(line.terminationState, line.status) },
    ];
  });
}

/** The timelines as text, one pod a line, for a failure message and the proof run's log. */
export function describeArrivals(arrivals: readonly ArrivalTimeline[]): string {
  const at = (ms: number | null) => (ms === null ? '-' : `${ms}`);
  return arrivals
    .map(
      (a) =>
        `  ${a.pod} on ${a.node} (${a.server}): created ${at(a.createdMs)}, hc WARMING ${at(a.hcWarmingMs)}, readiness probe ${at(a.hcReadinessSeenMs)}, hc OPEN ${at(a.hcOpenMs)}, Ready ${at(a.readyMs)}, ` +
        `health slice ${at(a.healthSliceReadyMs)}, traffic slice ${at(a.trafficSliceReadyMs)}, health rule ${at(a.healthRuleMs)}, traffic rule ${at(a.trafficRuleMs)} (read within ${at(a.trafficRuleReadMs)} ms), ` +
        `LB UP ${at(a.lbUpMs)}, first request ${at(a.firstRequestMs)} ${a.firstRequestState ?? ''} (connect ${at(a.firstRequestConnectMs)} ms, ${at(a.firstRequestRetries)} retries), ` +
        `first ok ${at(a.firstOkMs)}: at the UP the traffic NodePort ${a.trafficAtUp === null ? 'was not seen' : a.trafficAtUp === 'dropped' ? 'dropped' : `led to the ${a.trafficAtUp}`}, window ${a.windowMs === null ? '-' : `${a.windowMs} ms`}${a.windowEndBy ? ` (ended by ${a.windowEndBy})` : ''}, ${a.requestsInWindow} request(s) sent in it`,
    )
    .join('\n');
}

/** The failures as text, one a line, for a failure message and the proof run's log. */
export function describeFailures(failures: readonly AssignedFailure[]): string {
  return failures
    .map(
      (f) =>
        `  ${f.outcome} ${f.startMs}..${f.endMs} ms: ${f.server ?? 'no LB line'} ${f.terminationState ?? ''}${f.status === null ? '' : ` ${f.status}`}, ${f.half} half: ${f.cause}`,
    )
    .join('\n');
}

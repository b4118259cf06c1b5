/**
 * How long-lived streams end when a gateway pod terminates (spec.traffic.longLived). Pure.
 *
 * What Envoy can do, measured on 1.36.4 and 1.40.0 (docs/long-lived.md): nothing in a drain asks a
 * WebSocket, an SSE stream, a gRPC stream alone on its connection or a TCP connection to leave;
 * drain_timeout does not end them; they run until something cuts them. An HTTP/2 connection that
 * carries other calls gets GOAWAY with its next response. Two Envoy settings end streams at an
 * age: `max_connection_duration` sends HTTP/2 and gRPC clients a GOAWAY (HTTP/1.1 streams get
 * nothing), `max_stream_duration` cuts every HTTP stream, and the tcp_proxy's
 * `max_downstream_connection_duration` closes a TCP connection.
 *
 * So the plan: ask (GOAWAY, where the protocol has one, `goawayLeadSeconds` before the cut), wait
 * up to a bound (the stream lifetime the team enforces: every stream under way at the drain has
 * ended by rotation within it, and the drain timeout covers it), then cut (the sequence ends; what
 * is still open is cut at DOWN or at Envoy's exit). Without a bound, or with one the grace period
 * cannot hold, the drain waits for requests only and the streams are cut at the end: a finding says
 * so, with the bound that would fit.
 */
import { setAt, removeAt, type Fix } from '../core/fix';
import type { LongLivedKind, LongLivedSpec } from '../schema/long-lived';
import type { GatewaySpec } from '../schema/gateway-spec';
import { derived, specInput, type Derived, type GivenPaths } from '../model/derived';
import { SANE_GRACE_PERIOD_SECONDS } from '../model/grace-period';
import type { LbModel } from '../lb/registry';
import type { RuleOf } from '../model/finding';
import type { LbBehaviour } from '../model/lb-behaviour';
import type { Sequence } from './sequence';
import { confirmedFixes, type LbAlternative } from './order-choice';
import { longestRequestSeconds, type Timings } from './timings';

/** docs/long-lived.md: where every ending below was measured. */
export const LONG_LIVED_EVIDENCE = 'docs/long-lived.md';

/** What happens to one kind, from the measurements (both Envoy versions alike unless said). */
export type KindEnding = {
  kind: LongLivedKind;
  /** After the sidecar's drain calls. */
  inDrain: string;
  /** The plan's signal before the cut, if the protocol has one. */
  askToLeave: string;
  /** What ends it at its lifetime bound (rotation), as the client sees it. */
  atBound: string;
  /** What ends it when it is still open at the end of the sequence. */
  atTermination: string;
};

const ENDINGS: Record<LongLivedKind, Omit<KindEnding, 'kind'>> = {
  websocket: {
    inDrain: 'nothing: an upgraded HTTP/1.1 connection gets no signal from Envoy; keeps flowing',
    askToLeave: 'none (Envoy cannot send a WebSocket close frame)',
    atBound: 'max_stream_duration cuts it; the client sees close 1006 about 1 s later',
    atTermination: "close 1006 at Envoy's exit",
  },
  'grpc-stream': {
    inDrain: 'nothing, unless another call on the same connection gets a response (then GOAWAY); keeps flowing',
    askToLeave: 'GOAWAY (NO_ERROR) at max_connection_duration: grpc-js moves the channel to IDLE; the stream continues',
    atBound: 'max_stream_duration resets it: grpc-js status INTERNAL (RST_STREAM NO_ERROR on 1.36, INTERNAL_ERROR on 1.40), not retried by default',
    atTermination: "status UNAVAILABLE at Envoy's exit",
  },
  sse: {
    inDrain: 'nothing on HTTP/1.1 (on a multiplexed HTTP/2 connection, GOAWAY with the next response); keeps flowing',
    askToLeave: 'none on HTTP/1.1 (GOAWAY at max_connection_duration on HTTP/2)',
    atBound: 'max_stream_duration cuts it; the client sees the response aborted about 1 s later',
    atTermination: "response aborted mid-body at Envoy's exit",
  },
  tcp: {
    inDrain: 'nothing: the tcp_proxy has no drain; keeps flowing',
    askToLeave: 'none (raw TCP has no signal)',
    atBound: 'tcp_proxy max_downstream_connection_duration closes it with a FIN',
    atTermination: "FIN at Envoy's exit",
  },
};

export type LongLivedPlan = {
  kinds: LongLivedKind[];
  clientsReconnect: boolean;
  endings: KindEnding[];
  /** HCM max_stream_duration: the cut at the bound. Null without a bound. */
  maxStreamDurationSeconds: Derived | null;
  /** HCM max_connection_duration: the GOAWAY before the cut. Null without a bound. */
  maxConnectionDurationSeconds: Derived | null;
  /** tcp_proxy max_downstream_connection_duration. Null without a bound or without tcp. */
  tcpMaxConnectionDurationSeconds: Derived | null;
  /** How long the drain waits for streams to end by rotation; null when it does not wait for them. */
  streamWaitSeconds: Derived | null;
  /** The drain timeout covers streamWaitSeconds (else the streams still open are cut at the end). */
  waitCovered: boolean;
  /** The largest lifetime bound whose wait keeps terminationGracePeriodSeconds within the sane limit; 0 when none does. */
  maxFittingLifetimeSeconds: number;
};

/** A drain-time wait for a stream lifetime: one poll sees the last stream, the next sees 0. */
export function streamWait(lifetimeSeconds: number, pollIntervalSeconds: number, given: GivenPaths): Derived {
  return derived(lifetimeSeconds + Math.ceil(2 * pollIntervalSeconds), 'maxStreamLifetimeSeconds + ceil(2 x pollInterval)', {
    maxStreamLifetimeSeconds: {
      value: lifetimeSeconds,
      source: 'spec.traffic.longLived.maxStreamLifetimeSeconds: a stream under way at the drain ends by max_stream_duration within it',
    },
    pollInterval: specInput(given, 'spec.drain.pollInterval', pollIntervalSeconds, '1 s'),
  });
}

/** The plan's long-lived part; `waitCovered` and `maxFittingLifetimeSeconds` come from the timings (plan-gateway.ts). */
export function planLongLived(
  ll: LongLivedSpec,
  spec: GatewaySpec,
  given: GivenPaths,
  fit: { waitCovered: boolean; maxFittingLifetimeSeconds: number },
): LongLivedPlan {
  const bound = ll.maxStreamLifetimeSeconds;
  const boundInput = specInput(given, 'spec.traffic.longLived.maxStreamLifetimeSeconds', bound ?? 0, 'none');
  const lead = bound === undefined ? 0 : Math.max(1, Math.ceil(0.1 * bound));
  return {
    kinds: ll.kinds,
    clientsReconnect: ll.clientsReconnect,
    endings: ll.kinds.map((kind) => ({ kind, ...ENDINGS[kind] })),
    maxStreamDurationSeconds: bound === undefined ? null : derived(bound, 'maxStreamLifetimeSeconds', { maxStreamLifetimeSeconds: boundInput }),
    maxConnectionDurationSeconds:
      bound === undefined
        ? null
        : derived(bound - lead, 'maxStreamLifetimeSeconds - max(1, ceil(0.1 x maxStreamLifetimeSeconds))', {
            maxStreamLifetimeSeconds: boundInput,
            goawayLead: {
              value: lead,
              source:
                'plan: HTTP/2 and gRPC clients get GOAWAY this long before the cut, so a client that moves on GOAWAY leaves before it (docs/long-lived.md)',
            },
          }),
    tcpMaxConnectionDurationSeconds:
      bound === undefined || !ll.kinds.includes('tcp') ? null : derived(bound, 'maxStreamLifetimeSeconds', { maxStreamLifetimeSeconds: boundInput }),
    streamWaitSeconds: bound === undefined ? null : streamWait(bound, spec.spec.drain.pollInterval, given),
    ...fit,
  };
}

const FIELD = 'spec.traffic.longLived';
const path = (...keys: string[]) => ['spec', 'traffic', 'longLived', ...keys];

function lifetimeFix(maxFitting: number, why: string): Fix[] {
  return maxFitting >= 10
    ? [{ description: `set maxStreamLifetimeSeconds to ${maxFitting} s, ${why}`, edits: [setAt(path('maxStreamLifetimeSeconds'), maxFitting)] }]
    : [];
}

const POOL =
  'or move the streams to a gateway of their own (a separate Deployment and LB pool, terminated rarely and with its own plan), so request traffic keeps short drains';

/** What the long-lived rules read of a plan (the whole of it is plan-context.ts's PlanContext). */
export type LongLivedRuleContext = {
  spec: GatewaySpec;
  lb: LbBehaviour<LbModel>;
  sequence: Sequence;
  timings: Timings;
  longLived: LongLivedPlan | null;
  alternatives(): LbAlternative[];
};

/** The long-lived plan and its spec block, when the spec has spec.traffic.longLived. */
function streams(ctx: LongLivedRuleContext): { ll: LongLivedPlan; spec: LongLivedSpec; kinds: string } | undefined {
  const ll = ctx.longLived;
  if (!ll) return undefined;
  return { ll, spec: ctx.spec.spec.traffic.longLived!, kinds: ll.kinds.join(', ') };
}

/** The findings of the long-lived plan; none when the spec has no spec.traffic.longLived. */
export const LONG_LIVED_RULES: readonly RuleOf<LongLivedRuleContext>[] = [
  {
    id: 'long-lived-clients-do-not-reconnect',
    severity: 'error',
    field: `${FIELD}.clientsReconnect`,
    check: (ctx) => {
      const s = streams(ctx);
      return s && !s.ll.clientsReconnect
        ? {
            message: `no Envoy setting ends a ${s.kinds} stream without its client seeing a failure (measured: nothing in a drain asks it to leave; a rotation or Envoy's exit cuts it), so every stream open when a pod terminates fails for clients that do not reconnect`,
            remediation: `make the clients reconnect and resume from their last message (a sequence number, SSE's Last-Event-ID), then set clientsReconnect: true; ${POOL}`,
            fixes: [{ description: 'the clients reconnect and resume: clientsReconnect true', edits: [setAt(path('clientsReconnect'), true)] }],
            evidence: LONG_LIVED_EVIDENCE,
          }
        : undefined;
    },
  },
  {
    id: 'long-lived-unbounded',
    severity: 'warning',
    field: `${FIELD}.maxStreamLifetimeSeconds`,
    check: (ctx) => {
      const s = streams(ctx);
      return s && s.ll.clientsReconnect && s.spec.maxStreamLifetimeSeconds === undefined
        ? {
            message: `${s.kinds} streams have no lifetime bound: one open at a termination keeps in-flight above 0 until the drain timeout (${ctx.timings.drainTimeoutSeconds}s), and is then cut at the end of the sequence (measured: nothing in a drain asks it to leave, drain_timeout does not end it)`,
            remediation: `set maxStreamLifetimeSeconds (at most ${s.ll.maxFittingLifetimeSeconds} s keeps terminationGracePeriodSeconds within ${SANE_GRACE_PERIOD_SECONDS} s): Envoy then rotates streams at that age, with a GOAWAY first where the protocol has one, and the drain waits for the rotation instead of cutting; ${POOL}`,
            fixes: lifetimeFix(s.ll.maxFittingLifetimeSeconds, 'the largest lifetime the drain can wait for'),
            evidence: LONG_LIVED_EVIDENCE,
          }
        : undefined;
    },
  },
  {
    id: 'long-lived-drain-timeout-below-lifetime',
    severity: 'warning',
    field: 'spec.drain.timeout',
    check: (ctx) => {
      const s = streams(ctx);
      const wait = s && uncoveredWait(s);
      const timeout = ctx.spec.spec.drain.timeout;
      return s && wait !== undefined && timeout !== undefined && timeout < wait
        ? {
            message: `spec.drain.timeout ${timeout}s is below the stream wait (${wait}s = ${s.ll.streamWaitSeconds!.formula}): streams under way at the drain are cut at the end of the sequence instead of rotating`,
            remediation: 'remove spec.drain.timeout, so the plan derives one that covers the stream lifetime',
            fixes: [{ description: 'remove spec.drain.timeout', edits: [removeAt(['spec', 'drain', 'timeout'])] }],
            evidence: LONG_LIVED_EVIDENCE,
          }
        : undefined;
    },
  },
  {
    id: 'long-lived-lifetime-exceeds-grace',
    severity: 'warning',
    field: `${FIELD}.maxStreamLifetimeSeconds`,
    check: (ctx) => {
      const s = streams(ctx);
      const wait = s && uncoveredWait(s);
      const timeout = ctx.spec.spec.drain.timeout;
      // The drain timeout below the wait is the finding above; this one is the grace period's limit.
      return s && wait !== undefined && !(timeout !== undefined && timeout < wait)
        ? {
            message: `waiting ${wait}s for streams (${s.ll.streamWaitSeconds!.formula}) would put terminationGracePeriodSeconds above ${SANE_GRACE_PERIOD_SECONDS}s, so the drain waits for requests only and streams under way at the drain are cut at the end of the sequence; they still rotate at ${s.spec.maxStreamLifetimeSeconds}s`,
            remediation: `lower maxStreamLifetimeSeconds to ${s.ll.maxFittingLifetimeSeconds} s or less; ${POOL}`,
            fixes: lifetimeFix(s.ll.maxFittingLifetimeSeconds, 'the largest lifetime the drain can wait for'),
            evidence: LONG_LIVED_EVIDENCE,
          }
        : undefined;
    },
  },
  {
    id: 'long-lived-bound-cuts-requests',
    severity: 'warning',
    field: `${FIELD}.maxStreamLifetimeSeconds`,
    check: (ctx) => {
      const s = streams(ctx);
      const longestRequest = longestRequestSeconds(ctx.spec.spec.traffic.longRequestP99Seconds);
      if (!s || s.spec.maxStreamLifetimeSeconds === undefined || s.spec.maxStreamLifetimeSeconds >= longestRequest) return undefined;
      // The fix must not bring back long-lived-lifetime-exceeds-grace (whose fix lowers the bound):
      // offered only when the longest request fits the grace period too.
      const fits = longestRequest <= s.ll.maxFittingLifetimeSeconds;
      return {
        message: `max_stream_duration ${s.spec.maxStreamLifetimeSeconds}s ends every HTTP stream at that age, ordinary requests too: requests longer than that are cut (the longest the plan expects is ceil(1.2 x longRequestP99Seconds) = ${longestRequest}s)`,
        remediation: fits
          ? `raise maxStreamLifetimeSeconds to ${longestRequest} s; ${POOL}`
          : `no lifetime both covers the longest request (${longestRequest} s) and fits the grace period (at most ${s.ll.maxFittingLifetimeSeconds} s): ${POOL.replace(/^or /, '')}`,
        fixes: fits
          ? [
              {
                description: `maxStreamLifetimeSeconds ${longestRequest} s, the longest request`,
                edits: [setAt(path('maxStreamLifetimeSeconds'), longestRequest)],
              },
            ]
          : [],
        evidence: LONG_LIVED_EVIDENCE,
      };
    },
  },
  {
    id: 'long-lived-reconnect-refused-until-down',
    severity: 'warning',
    field: `${FIELD}.reconnectToleranceSeconds`,
    check: (ctx) => {
      const s = streams(ctx);
      const tolerance = s?.spec.reconnectToleranceSeconds;
      return s &&
        s.ll.clientsReconnect &&
        tolerance !== undefined &&
        ctx.sequence === 'drain-first' &&
        ctx.lb.refused.value !== 'resent' &&
        tolerance < ctx.timings.lbDetectSeconds
        ? {
            message: `drain-first refuses new connections from the drain until the LB marks the pod DOWN (up to ${ctx.timings.lbDetectSeconds}s), and the LB ${ctx.lb.refused.value === 'failed' ? 'does not re-send' : 'may not re-send'} a refused connection: a client whose stream rotates in that window may be refused until DOWN, longer than its ${tolerance}s tolerance`,
            remediation: 'let the LB re-send refused connections to another backend',
            fixes: confirmedFixes(ctx.alternatives(), false, ctx.spec.spec.sequence !== undefined),
            evidence: LONG_LIVED_EVIDENCE,
          }
        : undefined;
    },
  },
  {
    id: 'long-lived-grpc-rotation-is-internal',
    severity: 'info',
    field: `${FIELD}.kinds`,
    check: (ctx) => {
      const s = streams(ctx);
      return s && s.ll.clientsReconnect && s.ll.kinds.includes('grpc-stream') && s.ll.maxStreamDurationSeconds
        ? {
            message: `Envoy's max_stream_duration (${s.ll.maxStreamDurationSeconds.value}s) ends a gRPC stream with RST_STREAM, which grpc-js reports as status INTERNAL (measured on 1.36.4 and 1.40.0); gRPC retry policies do not retry INTERNAL by default. Envoy 1.36.4 resets with NO_ERROR, and a bidirectional call still sending may then get no status at all on Node (its http2 ends the stream only once the call has finished sending)`,
            remediation:
              'have the gRPC clients re-open the stream on INTERNAL as on UNAVAILABLE (their reconnect path), resuming from the last message, and give bidirectional calls a deadline or keepalive so that a reset they are not told of still ends them',
            evidence: LONG_LIVED_EVIDENCE,
          }
        : undefined;
    },
  },
];

/** The stream wait a bounded lifetime needs where the drain timeout does not cover it; undefined where it does. */
function uncoveredWait(s: { ll: LongLivedPlan; spec: LongLivedSpec }): number | undefined {
  return s.spec.maxStreamLifetimeSeconds !== undefined && !s.ll.waitCovered ? s.ll.streamWaitSeconds!.value : undefined;
}

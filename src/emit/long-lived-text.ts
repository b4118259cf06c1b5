import type { Plan } from '../plan/plan-gateway';
import { objectNames } from '../pod/names';

/**
 * What the plan says of long-lived streams (spec.traffic.longLived), as lines for people (plan
 * text, PLAN.md): the limits Envoy gets and why, how long the drain waits for streams to rotate,
 * and how each kind ends (measured on real Envoy, docs/long-lived.md). Empty without longLived.
 */
export function longLivedLines(plan: Plan): string[] {
  const ll = plan.longLived;
  if (!ll) return [];
  const out = [
    `Kinds: ${ll.kinds.join(', ')}; clients ${ll.clientsReconnect ? 'reconnect and resume' : 'do NOT reconnect: every stream open at a termination fails'}.`,
  ];
  if (ll.maxStreamDurationSeconds && ll.maxConnectionDurationSeconds && ll.streamWaitSeconds) {
    const tcp = ll.tcpMaxConnectionDurationSeconds
      ? `; tcp_proxy max_downstream_connection_duration ${ll.tcpMaxConnectionDurationSeconds.value}s = ${ll.tcpMaxConnectionDurationSeconds.formula}`
      : '';
    out.push(
      `Envoy limits (EnvoyFilter ${plan.gateway.namespace}/${objectNames(plan.gateway.name).streamLimits}, beside the pod on every delivery path): max_connection_duration ${ll.maxConnectionDurationSeconds.value}s = ${ll.maxConnectionDurationSeconds.formula} (GOAWAY to HTTP/2 and gRPC clients first); max_stream_duration ${ll.maxStreamDurationSeconds.value}s = ${ll.maxStreamDurationSeconds.formula} (every HTTP stream ends at this age)${tcp}.`,
      ll.waitCovered
        ? `The drain waits up to ${ll.streamWaitSeconds.value}s = ${ll.streamWaitSeconds.formula} for streams to rotate (the drain timeout covers it): each stream under way at the drain ends at its bound and its client reconnects to another pod; none is cut.`
        : `The drain cannot wait ${ll.streamWaitSeconds.value}s = ${ll.streamWaitSeconds.formula} for streams within the grace period: it waits for requests only, and streams still open at the end of the sequence are cut (see the findings).`,
    );
  } else {
    out.push(
      `No lifetime bound: nothing in a drain asks a stream to leave, so a stream open at a termination holds in-flight above 0 until the drain timeout (${plan.timings.drainTimeoutSeconds}s) and is then cut (see the findings).`,
    );
  }
  for (const e of ll.endings)
    out.push(`${e.kind}: in a drain ${e.inDrain}; asked to leave: ${e.askToLeave}; at the bound: ${e.atBound}; at a termination: ${e.atTermination}.`);
  return out;
}

import { roundSeconds } from '../../core/duration';
import type { F5Lb } from './schema';
import { derived, specInput, type GivenPaths } from '../../model/derived';
import type { LbBehaviour } from '../../model/lb-behaviour';

const P = 'spec.loadBalancer';

const DOWN_ACTION: Record<F5Lb['serviceDownAction'], { cuts: boolean; text: string }> = {
  none: { cuts: false, text: 'service-down-action none: existing flows continue' },
  reset: { cuts: true, text: 'service-down-action reset: live flows get a RST' },
  drop: { cuts: true, text: 'service-down-action drop: live flows are silently dropped (clients wait for their own timeout)' },
  reselect: { cuts: true, text: 'service-down-action reselect: live flows are moved to another member mid-request' },
};

/** F5 BIG-IP: the monitor is time-based: DOWN when no valid response came within `timeout`. */
export function f5Behaviour(lb: F5Lb, given: GivenPaths): LbBehaviour<F5Lb['model']> {
  const action = DOWN_ACTION[lb.serviceDownAction];
  return {
    model: 'f5',
    probeIntervalSeconds: lb.interval,
    detect: derived(lb.timeout, 'timeout', {
      timeout: specInput(given, `${P}.timeout`, lb.timeout, 'F5 HTTP monitor timeout 16 s (docs/facts.md §3)'),
    }),
    // One good answer marks a member UP again, within one interval; then slow-ramp-time passes
    // before it takes its full share of new connections (F5 pool slow-ramp-time, docs/facts.md §3).
    recover: derived(roundSeconds(lb.interval + lb.slowRampTime), 'interval + slowRampTime', {
      interval: specInput(given, `${P}.interval`, lb.interval, 'F5 HTTP monitor interval 5 s (docs/facts.md §3)'),
      slowRampTime: specInput(given, `${P}.slowRampTime`, lb.slowRampTime, 'F5 pool slow-ramp-time 10 s (docs/facts.md §3)'),
    }),
    propagation: { value: 0, source: 'F5 stops selecting the member at DOWN' },
    cutsSessionsOnDown: action.cuts,
    onDown: action.text,
    onDownSource: {
      kind: 'vendor-doc',
      ref: 'F5 pool service-down-action: "connection handling when member is non-responsive", default none (F5 AS3 schema, Pool.serviceDownAction)',
    },
    refused: {
      value: lb.reselectTries > 0 ? 'resent' : 'failed',
      detail:
        lb.reselectTries > 0
          ? `pool reselect-tries ${lb.reselectTries}: a connection the member refuses is tried on another member`
          : 'pool reselect-tries 0 (F5 default): BIG-IP tries no other member, and the client connection is reset',
      source: {
        kind: 'vendor-doc',
        ref: 'F5 pool reselect-tries: "Maximum number of attempts to find a responsive member for a connection", default 0 (F5 AS3 schema, Pool.reselectTries; F5 Ansible bigip_pool: "the number of times the system tries to contact a pool member after a passive failure")',
      },
      holdMs: 0,
    },
    resetRequestResent: {
      value: false,
      detail: 'not established whether reselect-tries also re-sends a request whose server connection was reset after it was sent: taken as not',
      source: { kind: 'not-known', ref: "F5's documentation found names connection failures only (a failed server-side connect)" },
    },
    // Without a OneConnect profile BIG-IP picks a member for a client connection's first request and
    // sends the later ones over the same server-side connection; with one it pools server-side
    // connections for any client (F5 "What is HTTP? Part VII - OneConnect").
    reuse: {
      drainFirst: true,
      otherOrders: true,
      detail:
        "BIG-IP sends a client connection's later requests over the same connection to the pod (and with a OneConnect profile pools those connections for any client)",
      source: { kind: 'vendor-doc', ref: 'F5 DevCentral "What is HTTP? Part VII - OneConnect"' },
    },
    // recv-disable matches the body; the health body is the sidecar's state name, so the
    // response stays 200 while its body carries the configured string.
    ...(lb.recvDisable
      ? {
          gracefulSignal: {
            status: 200,
            body: lb.recvDisable,
            lbState: 'member disabled (existing connections continue)',
            source: `${P}.recvDisable`,
            doc: {
              kind: 'vendor-doc',
              ref: 'F5 HTTP monitor recv-disable: a matching response disables the member, existing connections continue (docs/facts.md §3)',
            },
          },
        }
      : {}),
    probeReachesSidecar: true,
    // Outside the cluster: it needs a node port or host port.
    probesPodIp: false,
  };
}

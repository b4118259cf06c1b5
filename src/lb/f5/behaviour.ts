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
    resendsRefusedConnections: 'unknown',
    resendDetail: 'not established for F5 whether a refused connection is re-sent to another member (docs/facts.md §3)',
    // Without a OneConnect profile BIG-IP picks a member for a client connection's first request and
    // sends the later ones over the same server-side connection; with one it pools server-side
    // connections for any client (F5 "What is HTTP? Part VII - OneConnect").
    reusesConnections: true,
    reuseDetail:
      "BIG-IP sends a client connection's later requests over the same connection to the pod (and with a OneConnect profile pools those connections for any client)",
    // recv-disable matches the body; the health body is the sidecar's state name, so the
    // response stays 200 while its body carries the configured string.
    ...(lb.recvDisable
      ? { gracefulSignal: { status: 200, body: lb.recvDisable, lbState: 'member disabled (existing connections continue)', source: `${P}.recvDisable` } }
      : {}),
    probeReachesSidecar: true,
    // Outside the cluster: it needs a node port or host port.
    probesPodIp: false,
  };
}

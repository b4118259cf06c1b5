/**
 * The events of the sidecar's transition table. The state, sequence and flow names are part of the
 * contract with the planner and live in src/contract/hc.ts (re-exported here for the sidecar's own
 * modules); the state name is the body of every health answer.
 */
export { CLOSED, CLOSING, DRAINING, FAULT, FLOWS, OPEN, SEQUENCES, STATES, WARMING, type Flow, type HcState, type Sequence } from '../contract/hc';

export const EVENTS = [
  'drain', // POST /drain (the preStop): start the configured sequence
  'close-lb', // POST /close-lb: fail the LB health only
  'close', // POST /close: drain the proxy now, close everything at 0
  'reopen', // POST /reopen
  'buffer-elapsed', // timer: the LB buffer has passed
  'zero', // poll: in-flight reached 0
  'drain-timeout', // timer: in-flight did not reach 0 in drainTimeoutSeconds
  'envoy-fault', // poll: faultAfterFailures consecutive failures
  'envoy-ok', // poll: Envoy answers LIVE and serves its configuration (and, on a start without a trusted state file, has no drain)
  'readiness-seen', // GET /health answered 200 to a kubelet source while WARMING (the start hold counts from it)
  'warmed', // timer: the start hold has passed
  'drain-found', // start without a trusted state file: Envoy's listeners were already drained
] as const;
export type HcEvent = (typeof EVENTS)[number];

/** Events that come from HTTP requests; a refusal of one is a 409, logged and counted. */
export const REQUEST_EVENTS: ReadonlySet<HcEvent> = new Set<HcEvent>(['drain', 'close-lb', 'close', 'reopen']);

/**
 * State, event and flow names of the hc sidecar. The state name is the body of every health answer.
 */

/** Answering 200 to the LB and to readiness; no sequence has started. */
export const OPEN = 'OPEN';
/** The proxy has been told to drain; waiting for in-flight to reach 0 (or the drain timeout). */
export const DRAINING = 'DRAINING';
/** The LB has been told to go away (soft or hard); waiting the LB buffer for it to act. */
export const CLOSING = 'CLOSING';
/** The sequence has finished: everything but liveness answers 503. Final. */
export const CLOSED = 'CLOSED';
/** Envoy's admin is unreachable, slow, talks garbage, or says Envoy is not LIVE: nothing says 200. */
export const FAULT = 'FAULT';

export const STATES = [OPEN, DRAINING, CLOSING, CLOSED, FAULT] as const;
export type HcState = (typeof STATES)[number];

/** The three orders of docs/facts.md §2. */
export const SEQUENCES = ['drain-first', 'health-first', 'soft-drain'] as const;
export type Sequence = (typeof SEQUENCES)[number];

/**
 * A flow is the path through the table a pod is on: one of the sequences (started by /drain), or
 * `manual` (started by /close-lb or /close, the manual steps).
 */
export type Flow = Sequence | 'manual';

export const EVENTS = [
  'drain', // POST /drain (the preStop): start the configured sequence
  'close-lb', // POST /close-lb: fail the LB health only
  'close', // POST /close: drain the proxy now, close everything at 0
  'reopen', // POST /reopen
  'buffer-elapsed', // timer: the LB buffer has passed
  'zero', // poll: in-flight reached 0
  'drain-timeout', // timer: in-flight did not reach 0 in drainTimeoutSeconds
  'envoy-fault', // poll: faultAfterFailures consecutive failures
  'envoy-ok', // poll: Envoy answers LIVE again
] as const;
export type HcEvent = (typeof EVENTS)[number];

/** Events that come from HTTP requests; a refusal of one is a 409, logged and counted. */
export const REQUEST_EVENTS: ReadonlySet<HcEvent> = new Set<HcEvent>(['drain', 'close-lb', 'close', 'reopen']);

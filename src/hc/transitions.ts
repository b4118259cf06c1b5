/**
 * The transition table: flow × state × event → state. An event missing from a row is illegal in
 * that state and is refused with a reason (a 409 when it came from a request). Side effects (Envoy
 * calls, timers, the state file) are the machine's business; this module only says where to go.
 */
import { CLOSED, CLOSING, DRAINING, FAULT, OPEN, WARMING, type Flow, type HcEvent, type HcState } from './states';

/** A condition on facts the state alone does not carry. */
export type Guard = 'proxy-not-drained' | 'no-sequence';
export type Target = HcState | { readonly to: HcState; readonly guard: Guard };
type Row = Readonly<Partial<Record<HcEvent, Target>>>;
export type TransitionTable = Readonly<Record<HcState, Row>>;

/** Facts the guards read. */
export interface GuardFacts {
  /** A drain_listeners call may have reached Envoy: nothing can reopen the listeners. */
  readonly proxyDrained: boolean;
  /** /drain, /close-lb or /close was accepted since the last OPEN. */
  readonly sequenceStarted: boolean;
}

export type TransitionResult = { readonly ok: true; readonly to: HcState; readonly changed: boolean } | { readonly ok: false; readonly reason: string };

export const DRAIN_IRREVERSIBLE = 'Envoy listeners are stopped; a drain cannot be undone: restart the pod';

function openRow(onDrain: HcState): Row {
  return { drain: onDrain, 'close-lb': CLOSING, close: DRAINING, reopen: OPEN, 'envoy-fault': FAULT };
}

/**
 * WARMING is OPEN with the LB still told 503 (the start hold): the kubelet's readiness probe noted,
 * OPEN when the hold has passed. A drain or a manual step starts from here as from OPEN: the LB has
 * not been told 200 yet, so nothing it sends depends on this pod.
 */
function warmingRow(onDrain: HcState): Row {
  return { ...openRow(onDrain), reopen: WARMING, 'readiness-seen': WARMING, warmed: { to: OPEN, guard: 'no-sequence' } };
}

/**
 * FAULT keeps a started sequence's clock running underneath: its buffer timer still fires (and
 * sends the proxy drain), and reaching 0 or the drain timeout finishes it. Envoy answering again
 * ends FAULT only when no sequence has started (a drain cannot be taken back).
 */
const FAULT_ROW: Row = {
  drain: FAULT,
  close: FAULT,
  'buffer-elapsed': FAULT,
  zero: CLOSED,
  'drain-timeout': CLOSED,
  'envoy-fault': FAULT,
  // Envoy serves again (or for the first time): the start hold before the LB's first 200.
  'envoy-ok': { to: WARMING, guard: 'no-sequence' },
  // A start without a state file to trust that finds Envoy drained: the sequence resumes at its end
  // (the proxy drain, counted to 0 or the drain timeout, then CLOSED), the LB hearing 503 throughout.
  'drain-found': FAULT,
};

const CLOSED_ROW: Row = { drain: CLOSED, close: CLOSED, 'close-lb': CLOSED };

/** After the LB was failed first (health-first, soft-drain, manual): drained proxy, 0 → CLOSED. */
const LB_FIRST_DRAINING: Row = { drain: DRAINING, close: DRAINING, zero: CLOSED, 'drain-timeout': CLOSED, 'envoy-fault': FAULT };

const REOPEN_BEFORE_DRAIN: Target = { to: OPEN, guard: 'proxy-not-drained' };

export const TRANSITIONS: Readonly<Record<Flow, TransitionTable>> = {
  // Proxy first (stop accepting, finish in-flight), then 503, then readiness one LB buffer later.
  'drain-first': {
    WARMING: warmingRow(DRAINING),
    OPEN: openRow(DRAINING),
    DRAINING: { drain: DRAINING, close: DRAINING, zero: CLOSING, 'drain-timeout': CLOSING, 'envoy-fault': FAULT },
    CLOSING: { drain: CLOSING, 'close-lb': CLOSING, 'buffer-elapsed': CLOSED },
    CLOSED: CLOSED_ROW,
    FAULT: FAULT_ROW,
  },
  // 503 first, the proxy drain one LB buffer later, readiness at 0.
  'health-first': {
    WARMING: warmingRow(CLOSING),
    OPEN: openRow(CLOSING),
    CLOSING: { drain: CLOSING, 'close-lb': CLOSING, close: DRAINING, 'buffer-elapsed': DRAINING, reopen: REOPEN_BEFORE_DRAIN, 'envoy-fault': FAULT },
    DRAINING: { ...LB_FIRST_DRAINING, 'close-lb': DRAINING },
    CLOSED: CLOSED_ROW,
    FAULT: FAULT_ROW,
  },
  // The soft status first, the proxy drain one LB buffer later, 503 and readiness at 0.
  'soft-drain': {
    WARMING: warmingRow(CLOSING),
    OPEN: openRow(CLOSING),
    CLOSING: { drain: CLOSING, close: DRAINING, 'buffer-elapsed': DRAINING, reopen: REOPEN_BEFORE_DRAIN, 'envoy-fault': FAULT },
    DRAINING: LB_FIRST_DRAINING,
    CLOSED: CLOSED_ROW,
    FAULT: FAULT_ROW,
  },
  // /close-lb holds CLOSING without timers; /drain then continues as health-first from the moment
  // the LB was failed; /close drains the proxy at once.
  manual: {
    WARMING: warmingRow(CLOSING),
    OPEN: openRow(CLOSING),
    CLOSING: { drain: CLOSING, 'close-lb': CLOSING, close: DRAINING, 'buffer-elapsed': DRAINING, reopen: REOPEN_BEFORE_DRAIN, 'envoy-fault': FAULT },
    DRAINING: { ...LB_FIRST_DRAINING, 'close-lb': DRAINING },
    CLOSED: CLOSED_ROW,
    FAULT: FAULT_ROW,
  },
};

function guardHolds(guard: Guard, facts: GuardFacts): boolean {
  return guard === 'proxy-not-drained' ? !facts.proxyDrained : !facts.sequenceStarted;
}

function refusal(flow: Flow, state: HcState, event: HcEvent, facts: GuardFacts): string {
  if (event === 'reopen' && facts.proxyDrained) return DRAIN_IRREVERSIBLE;
  if (event === 'reopen' && state === FAULT) return "FAULT ends by itself when Envoy's admin answers LIVE again";
  if (event === 'envoy-ok') return 'a sequence has started: FAULT ends with it (CLOSED), never with OPEN';
  if (event === 'warmed') return 'a sequence has started: the start hold no longer leads to OPEN';
  if (event === 'close-lb' && state === FAULT) return 'Envoy is in FAULT: the LB endpoint already answers 503';
  return `'${event}' is not allowed in ${state} (${flow} flow)`;
}

/** Looks an event up in the table; `changed` is false for the idempotent self-transitions. */
export function transition(flow: Flow, state: HcState, event: HcEvent, facts: GuardFacts): TransitionResult {
  const target = TRANSITIONS[flow][state][event];
  if (target !== undefined) {
    const to = typeof target === 'string' ? target : guardHolds(target.guard, facts) ? target.to : undefined;
    if (to !== undefined) return { ok: true, to, changed: to !== state };
  }
  return { ok: false, reason: refusal(flow, state, event, facts) };
}

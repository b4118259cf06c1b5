/**
 * The persisted sequence context (what the state file holds) and the questions the machine asks of
 * it, each named once: pure functions, no clock, no I/O.
 */
import type { HcConfig } from '../contract/hc-config';
import { CLOSED, CLOSING, DRAINING, FAULT, OPEN, TERMINATION_EVENTS, WARMING } from '../contract/hc';
import { STATE_FILE_VERSION, type EventMarks, type PersistedState } from './types';

/** Slack added to every computed bound (waiters, the drain command), for timer and poll jitter. */
export const BOUND_MARGIN_MS = 5_000;

/**
 * The longest a sequence can run: the LB buffer on both sides of the drain covers every flow
 * (drain-first waits it after the drain, health-first and soft-drain before it, a manual
 * close-lb then drain may wait both). The sidecar's, the waiters' and `gracegate drain`'s bounds
 * all derive from it.
 */
export function sequenceBoundMs(config: Pick<HcConfig, 'lbBufferSeconds' | 'drainTimeoutSeconds'>): number {
  return (2 * config.lbBufferSeconds + config.drainTimeoutSeconds) * 1000;
}

export function noEvents(): EventMarks {
  return Object.fromEntries(TERMINATION_EVENTS.map((e) => [e.key, null])) as EventMarks;
}

/** A FAULT with no sequence: how the sidecar starts, until Envoy's /ready says LIVE. */
export function freshState(now: number, reason: string): PersistedState {
  return {
    version: STATE_FILE_VERSION,
    state: FAULT,
    enteredAt: now,
    reason,
    flow: null,
    sequenceStartedAt: null,
    bufferStartedAt: null,
    drainAckedAt: null,
    drainTimedOut: false,
    events: noEvents(),
    history: [{ state: FAULT, at: now, reason }],
  };
}

/**
 * The context with every recorded time later than `now` set to `now`: a resumed wait is then never
 * longer than it would have been had it started now.
 */
export function clampToNow(p: PersistedState, now: number): PersistedState {
  const at = (t: number) => Math.min(t, now);
  const opt = (t: number | null) => (t === null ? null : at(t));
  const events = Object.fromEntries(
    Object.entries(p.events).map(([k, mark]) => [k, mark && !mark.estimated ? { ...mark, at: at(mark.at) } : mark]),
  ) as EventMarks;
  return {
    ...p,
    enteredAt: at(p.enteredAt),
    sequenceStartedAt: opt(p.sequenceStartedAt),
    bufferStartedAt: opt(p.bufferStartedAt),
    drainAckedAt: opt(p.drainAckedAt),
    events,
    history: p.history.map((h) => ({ ...h, at: at(h.at) })),
  };
}

/** Forgets the sequence (a reopen, or Envoy back from a FAULT no sequence started in). */
export function clearSequence(p: PersistedState): void {
  p.flow = null;
  p.sequenceStartedAt = p.bufferStartedAt = p.drainAckedAt = null;
  p.drainTimedOut = false;
  p.events = noEvents();
}

/** /drain, /close-lb or /close was accepted since the last OPEN. */
export function sequenceStarted(p: PersistedState): boolean {
  return p.sequenceStartedAt !== null;
}

/** [3] is recorded: a drain call may have reached Envoy, and nothing can reopen its listeners. */
export function proxyDrainStarted(p: PersistedState): boolean {
  return p.events.proxyDrainStarts !== null;
}

/** [4] is recorded: in-flight reached 0, or the drain timeout gave up on it. */
export function drainEnded(p: PersistedState): boolean {
  return p.events.inFlightZero !== null;
}

/**
 * Only /close-lb has happened: the manual flow holds CLOSING with no LB buffer running and no proxy
 * drain, so nothing is scheduled and no end is in sight until /drain or /close.
 */
export function heldAfterCloseLb(p: PersistedState): boolean {
  return p.flow === 'manual' && p.bufferStartedAt === null && !proxyDrainStarted(p);
}

/** A persisted state worth resuming: a sequence had started (OPEN and a bare FAULT start fresh). */
export function resumable(p: PersistedState): boolean {
  return sequenceStarted(p) && p.state !== OPEN;
}

/**
 * The LB-buffer wait is running: in CLOSING, or under a FAULT before the proxy drain (FAULT keeps
 * the sequence's clock running; the buffer's end still sends the drain).
 */
export function bufferRunning(p: PersistedState): boolean {
  return p.bufferStartedAt !== null && (p.state === CLOSING || (p.state === FAULT && !proxyDrainStarted(p)));
}

/** The drain-timeout wait is running: the proxy was drained and [4] has not come yet. */
export function drainDeadlineRunning(p: PersistedState): boolean {
  return proxyDrainStarted(p) && !drainEnded(p) && (p.state === DRAINING || p.state === FAULT);
}

/**
 * When the start hold counts from (WARMING only): the kubelet's first readiness probe answered 200
 * in this WARMING (`readinessSeenAt`, null before; the machine forgets it out of WARMING) with
 * startHold.afterReadiness, else WARMING's entry; null while it has nothing to count from.
 */
export function startHoldFrom(p: PersistedState, hold: HcConfig['startHold'], readinessSeenAt: number | null): number | null {
  if (p.state !== WARMING) return null;
  if (!hold.afterReadiness) return p.enteredAt;
  return readinessSeenAt;
}

export type PollMode = 'ready' | 'count' | 'none';

/** What the next poll asks Envoy: /ready before the proxy drain, the in-flight count during it, nothing after. */
export function pollMode(p: PersistedState): PollMode {
  if (p.state === CLOSED) return 'none';
  if (!proxyDrainStarted(p)) return 'ready';
  return drainEnded(p) ? 'none' : 'count';
}

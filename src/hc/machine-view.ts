/**
 * The read side of the drain controller: what the LB, the kubelet's probes and GET /state are
 * told, computed from the persisted context alone. Pure: no clock, no port, nothing written.
 */
import type { HcConfig } from '../contract/hc-config';
import { STATE_FACTS, TERMINATION_EVENTS, type EnvoyProfile, type FinalScrape, type StateBody } from '../contract/hc';
import { lbAnswer, livenessAnswer, readinessAnswer } from './health-answers';
import { BOUND_MARGIN_MS, heldAfterCloseLb, proxyDrainStarted, sequenceBoundMs, sequenceStarted } from './sequence-context';
import type { HealthAnswer, PersistedState } from './types';

/**
 * A timestamp as ISO 8601, or null when it is none or outside what a Date can hold (±8.64e15 ms,
 * ECMA-262 "Time Values and Time Range"): toISOString throws a RangeError there, and an answer to
 * a request must never throw.
 */
export function isoTime(ms: number | null): string | null {
  return ms !== null && Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : null;
}

export type BoundConfig = Pick<HcConfig, 'lbBufferSeconds' | 'drainTimeoutSeconds'>;

/** The latest time the current sequence can finish, or null when none is running to an end. */
export function finishBy(p: PersistedState, cfg: BoundConfig): number | null {
  if (!sequenceStarted(p) || heldAfterCloseLb(p)) return null;
  return p.sequenceStartedAt! + sequenceBoundMs(cfg) + BOUND_MARGIN_MS;
}

export interface HealthAnswers {
  readonly lb: HealthAnswer;
  readonly readiness: HealthAnswer;
  readonly liveness: HealthAnswer;
}

/** The three health answers of a context: the LB's, the kubelet's readiness and liveness. */
export function healthOf(p: PersistedState, softSignal: HcConfig['softSignal']): HealthAnswers {
  return { lb: lbAnswer(p.state, p.flow, softSignal), readiness: readinessAnswer(p.state), liveness: livenessAnswer(p.state) };
}

/** What the poller and the waiters add to the context for GET /state. */
export interface LiveFacts {
  readonly inFlight: number | null;
  readonly lastPollAt: number | null;
  readonly lastPollError: string | null;
  readonly consecutiveFailures: number;
  readonly proxy: EnvoyProfile;
  readonly waiters: number;
  readonly finalScrape: FinalScrape | null;
}

export type ViewConfig = BoundConfig & Pick<HcConfig, 'sequence' | 'softSignal'>;

/** The body of GET /state. */
export function stateBody(p: PersistedState, cfg: ViewConfig, live: LiveFacts): StateBody {
  return {
    state: p.state,
    enteredAt: isoTime(p.enteredAt),
    reason: p.reason,
    sequence: cfg.sequence,
    flow: p.flow,
    finished: STATE_FACTS[p.state].finished,
    finishBy: isoTime(finishBy(p, cfg)),
    inFlight: live.inFlight,
    drainTimedOut: p.drainTimedOut,
    proxyDrained: proxyDrainStarted(p),
    drainAckedAt: isoTime(p.drainAckedAt),
    envoy: {
      lastPollAt: isoTime(live.lastPollAt),
      lastPollError: live.lastPollError,
      consecutiveFailures: live.consecutiveFailures,
      proxy: live.proxy,
    },
    health: healthOf(p, cfg.softSignal),
    events: TERMINATION_EVENTS.map(({ id, key, name }) => {
      const mark = p.events[key];
      return { id, name, at: mark ? isoTime(mark.at) : null, estimated: mark?.estimated ?? false, ...(mark?.note ? { note: mark.note } : {}) };
    }),
    waiters: live.waiters,
    history: p.history.map((h) => ({ state: h.state, at: isoTime(h.at), reason: h.reason })),
    finalScrape: live.finalScrape ? { ...live.finalScrape } : null,
  };
}

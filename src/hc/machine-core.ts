/**
 * The table core of the drain controller: the persisted context and the one way it changes,
 * fire(event): table lookup, context update, state change, event marks, state file. What an
 * accepted event sets going (the proxy drain call, the timers, the holds) is the host's, through
 * `CoreHost`.
 */
import type { HcConfig } from '../contract/hc-config';
import { EVENT, TERMINATION_EVENTS, type EventKey } from '../contract/hc';
import type { EventInFlight } from './event-in-flight';
import { healthOf } from './machine-view';
import { clearSequence, freshState, heldAfterCloseLb, proxyDrainStarted, sequenceStarted } from './sequence-context';
import { CLOSED, FAULT, OPEN, REQUEST_EVENTS, type HcEvent, type HcState } from './states';
import { transition, type GuardFacts, type TransitionResult } from './transitions';
import type { Clock, EnvoyPort, Logger, MachineCounters, PersistedState, StateStore } from './types';

const HISTORY_LIMIT = 50;

/** The events whose in-flight is the poll's own count, not a read at the event's moment: [3] and [4]. */
const POLL_COUNTED_EVENTS: ReadonlySet<EventKey> = new Set([EVENT.proxyDrainStarts.key, EVENT.inFlightZero.key]);

export type CoreConfig = Pick<HcConfig, 'sequence' | 'lbBufferSeconds' | 'drainTimeoutSeconds' | 'softSignal'>;

/** What the core needs from around it. */
export interface CoreHost {
  readonly clock: Clock;
  readonly envoy: Pick<EnvoyPort, 'profile'>;
  readonly store: StateStore;
  readonly log: Logger;
  readonly counters: MachineCounters;
  readonly eventInFlight: EventInFlight;
  /** The poll's last in-flight count (null before the first). */
  inFlight(): number | null;
  /** Answers every hold on the sequence's end (at CLOSED). */
  releaseHolds(): void;
  /** After an accepted event is saved: sends the proxy drain if it is due, re-arms the timers, polls now. */
  fired(needsDrainCall: boolean): void;
}

export class SequenceCore {
  private p: PersistedState;

  constructor(
    private readonly cfg: CoreConfig,
    private readonly host: CoreHost,
  ) {
    this.p = freshState(host.clock.now(), "starting: waiting for Envoy's /ready");
  }

  /** The live context (the core's own: read it, never change it). */
  get context(): PersistedState {
    return this.p;
  }

  get state(): HcState {
    return this.p.state;
  }

  /** Replaces the context (at start: the state file's, or a fresh FAULT) and saves it when asked. */
  adopt(p: PersistedState, options: { save: boolean }): void {
    this.p = p;
    if (options.save) this.save();
  }

  /** The flow of the sequence under way, or the one this sidecar would start. */
  flow() {
    return this.p.flow ?? this.cfg.sequence;
  }

  facts(): GuardFacts {
    return { proxyDrained: proxyDrainStarted(this.p), sequenceStarted: sequenceStarted(this.p) };
  }

  /** Whether the table would accept `event` now, without applying it. */
  check(event: HcEvent): TransitionResult {
    return transition(this.flow(), this.p.state, event, this.facts());
  }

  /** Applies one event: table lookup, context update, state change, event marks, state file. */
  fire(event: HcEvent, reason: string): TransitionResult {
    const result = this.check(event);
    if (!result.ok) {
      if (REQUEST_EVENTS.has(event)) {
        this.host.counters.refusedEvents++;
        this.host.log('warn', `refused '${event}'`, { state: this.p.state, flow: this.flow(), reason: result.reason });
      }
      return result;
    }
    const now = this.host.clock.now();
    const markedBefore = new Set(TERMINATION_EVENTS.filter(({ key }) => this.p.events[key] !== null).map(({ key }) => key));
    const needsDrainCall = this.applyEvent(event, now);
    if (result.changed) this.enter(result.to, now, reason);
    this.markEvents(now);
    const inFlight = this.host.inFlight();
    TERMINATION_EVENTS.forEach(({ key }) => {
      const mark = this.p.events[key];
      if (!mark || markedBefore.has(key)) return;
      // [3] and [4] take the poll's counts (the poller's counted(), and the count that ended the drain).
      if (!POLL_COUNTED_EVENTS.has(key)) this.host.eventInFlight.marked(key, mark.at);
      else if (key === EVENT.inFlightZero.key && inFlight !== null) this.host.eventInFlight.record(key, inFlight);
    });
    this.save();
    this.host.fired(needsDrainCall);
    return result;
  }

  /** The proxy's answer to the drain call arrived. */
  drainAcknowledged(at: number): void {
    this.p.drainAckedAt = at;
    this.save();
  }

  /** A new reason for the state it is in (FAULT's latest failure). */
  setReason(reason: string): void {
    this.p.reason = reason;
  }

  save(): void {
    try {
      this.host.store.save(this.p);
    } catch (err) {
      this.host.counters.stateFileErrors++;
      this.host.log('error', 'could not write the state file', { error: (err as Error).message });
    }
  }

  /** The long-lived part of the last count, for a drain that timed out: what held it (docs/long-lived.md). */
  private longLivedText(): string {
    const c = this.host.envoy.profile().lastCount;
    if (!c) return '';
    const parts = [
      ...(c.upgrades ? [`${c.upgrades} WebSocket (upgraded)`] : []),
      ...(c.otherConnections ? [`${c.otherConnections} TCP/passthrough connection(s)`] : []),
    ];
    return parts.length === 0 ? '' : ` (of them ${parts.join(' and ')}: long-lived, told nothing by the drain)`;
  }

  /** Updates the sequence context for an accepted event; true when the proxy drain must be sent. */
  private applyEvent(event: HcEvent, now: number): boolean {
    const p = this.p;
    const inFault = p.state === FAULT;
    const lbFailingSince = inFault ? p.enteredAt : now;
    switch (event) {
      case 'drain':
        if (p.flow === null) {
          p.flow = this.cfg.sequence;
          p.sequenceStartedAt = now;
          if (p.flow === 'drain-first') return this.startProxyDrain(now);
          p.bufferStartedAt = lbFailingSince;
        } else if (heldAfterCloseLb(p)) {
          // After /close-lb: the LB has been failing since [1]; wait what is left of its buffer.
          p.bufferStartedAt = p.events.lbHealthFails?.at ?? lbFailingSince;
        }
        return false;
      case 'close-lb':
        if (p.flow === null) {
          p.flow = 'manual';
          p.sequenceStartedAt = now;
        }
        return false;
      case 'close':
        if (p.flow === null) {
          p.flow = 'manual';
          p.sequenceStartedAt = now;
        }
        return this.startProxyDrain(now);
      case 'buffer-elapsed':
        return this.startProxyDrain(now);
      case 'zero':
      case 'drain-timeout': {
        const timedOut = event === 'drain-timeout';
        const held = timedOut ? this.longLivedText() : '';
        const inFlight = this.host.inFlight();
        p.events.inFlightZero = {
          at: now,
          estimated: false,
          ...(timedOut ? { note: `drain timeout: ${inFlight ?? 'unknown'} still in flight${held}` } : {}),
        };
        p.drainTimedOut = timedOut;
        if (timedOut) {
          this.host.counters.drainTimeouts++;
          this.host.log('warn', `drain timeout reached before in-flight reached 0${held}`, {
            inFlight,
            lastCount: this.host.envoy.profile().lastCount,
            drainTimeoutSeconds: this.cfg.drainTimeoutSeconds,
          });
        }
        if (p.flow === 'drain-first' && !inFault) p.bufferStartedAt = now;
        return false;
      }
      case 'drain-found':
        // The drain was sent by a run whose record is lost: a sequence of this sidecar's flow,
        // started and drained now as far as anyone can tell, its drain calls answered.
        p.sequenceStartedAt = now;
        p.flow = this.cfg.sequence;
        p.events.proxyDrainStarts = { at: now, estimated: true, note: 'found drained at start (no state file to trust)' };
        p.drainAckedAt = now;
        return false;
      case 'reopen':
      case 'envoy-ok':
      case 'envoy-fault':
      case 'readiness-seen':
      case 'warmed':
        return false;
    }
  }

  /** Records [3] (once); the call itself goes out after the state file has it. */
  private startProxyDrain(now: number): boolean {
    if (proxyDrainStarted(this.p)) return false;
    this.p.events.proxyDrainStarts = { at: now, estimated: false };
    return true;
  }

  private enter(to: HcState, now: number, reason: string): void {
    const from = this.p.state;
    this.p.state = to;
    this.p.enteredAt = now;
    this.p.reason = reason;
    this.p.history.push({ state: to, at: now, reason });
    if (this.p.history.length > HISTORY_LIMIT) this.p.history.splice(0, this.p.history.length - HISTORY_LIMIT);
    this.host.counters.transitions++;
    if (to === FAULT) this.host.counters.faultEntries++;
    if (to === OPEN) {
      clearSequence(this.p);
      this.host.eventInFlight.reset();
    }
    this.host.log(to === FAULT ? 'warn' : 'info', `${from} -> ${to}`, { reason, flow: this.p.flow });
    if (to === CLOSED) this.host.releaseHolds();
  }

  /** Records [1], [2], [5], [6] from what the endpoints now answer (only within a sequence). */
  private markEvents(now: number): void {
    const p = this.p;
    if (!sequenceStarted(p)) return;
    const e = p.events;
    const since = p.state === FAULT ? p.enteredAt : now;
    const faultNote = p.state === FAULT ? { note: `FAULT: ${p.reason}` } : {};
    const { lb, readiness } = healthOf(p, this.cfg.softSignal);
    if (lb.status !== 200 && e.lbHealthFails === null) {
      e.lbHealthFails = { at: since, estimated: false, ...(lb.status === 503 ? faultNote : { note: `soft signal ${lb.status}` }) };
    }
    if (lb.status === 503 && e.lbMarksDown === null) {
      const at = since + this.cfg.lbBufferSeconds * 1000;
      e.lbMarksDown = { at, estimated: true, note: 'expected: LB answered 503 + lbBuffer' };
      e.lbResetsSessions = { at, estimated: true, note: 'expected at DOWN when the LB resets sessions on DOWN' };
    }
    if (readiness.status !== 200 && e.readinessFails === null) e.readinessFails = { at: since, estimated: false, ...faultNote };
  }
}

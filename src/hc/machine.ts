/**
 * The drain controller: holds the state, applies the transition table, runs the timers and the
 * Envoy poll loop. Every side effect goes through an injected port (clock, Envoy, state store,
 * log), so the unit tests drive it with a fake clock and never sleep.
 *
 * Timers are derived from the persisted context (`schedule()`), so resuming after a restart is
 * "load the file, schedule()": the remaining time of every wait is computed from the recorded
 * timestamps, not restarted.
 */
import type { HcConfig } from './config';
import { EventInFlight } from './event-in-flight';
import { livenessAnswer, lbAnswer, readinessAnswer } from './health-answers';
import { CLOSED, CLOSING, DRAINING, FAULT, OPEN, REQUEST_EVENTS, type HcEvent, type HcState } from './states';
import { transition, type GuardFacts, type TransitionResult } from './transitions';
import {
  EVENT_NAMES,
  type Clock,
  type ControlAnswer,
  type EnvoyPort,
  type EventMark,
  type HealthAnswer,
  type Logger,
  type MachineCounters,
  type PersistedState,
  type StateStore,
} from './types';

/** Slack added to every computed bound (waiters, the drain command), for timer and poll jitter. */
export const BOUND_MARGIN_MS = 5_000;
/**
 * At most this many /wait-closed requests wait at once, and this many from one source address. The
 * kubelet sends one per termination (hooks are delivered at least once, so perhaps two): the rest is
 * someone else. Beyond either cap the newest waiter is kept and an older one displaced, so the
 * proxy's own hook is never refused.
 */
export const MAX_WAITERS = 32;
export const MAX_WAITERS_PER_SOURCE = 4;
export const DISPLACED_REASON = 'displaced by a newer /wait-closed';
const HISTORY_LIMIT = 50;

/**
 * The longest a sequence can run: the LB buffer on both sides of the drain covers every flow
 * (drain-first waits it after the drain, health-first and soft-drain before it, a manual
 * close-lb then drain may wait both). The sidecar's, the waiters' and `gracegate drain`'s bounds
 * all derive from it.
 */
export function sequenceBoundMs(config: Pick<HcConfig, 'lbBufferSeconds' | 'drainTimeoutSeconds'>): number {
  return (2 * config.lbBufferSeconds + config.drainTimeoutSeconds) * 1000;
}

/**
 * A timestamp as ISO 8601, or null when it is none or outside what a Date can hold (±8.64e15 ms,
 * ECMA-262 "Time Values and Time Range"): toISOString throws a RangeError there, and an answer to
 * a request must never throw.
 */
export function isoTime(ms: number | null): string | null {
  return ms !== null && Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : null;
}

export const NO_WITNESS_REASON = 'no pod termination witnessed (container restart?), not draining';

export interface HcMachineOptions {
  readonly config: HcConfig;
  readonly clock: Clock;
  readonly envoy: EnvoyPort;
  readonly store: StateStore;
  readonly log: Logger;
}

type Waiter = { readonly source: string; resolve(answer: HealthAnswer): void; cancelTimer(): void };
export type WaitClosed = { readonly answer: Promise<HealthAnswer>; cancel(): void };

class EnvoyNotLive extends Error {}

function freshState(now: number, reason: string): PersistedState {
  return {
    version: 1,
    state: FAULT,
    enteredAt: now,
    reason,
    flow: null,
    sequenceStartedAt: null,
    bufferStartedAt: null,
    drainAckedAt: null,
    drainTimedOut: false,
    events: EVENT_NAMES.map(() => null),
    history: [{ state: FAULT, at: now, reason }],
  };
}

/** A persisted state worth resuming: a sequence had started (OPEN and a bare FAULT start fresh). */
function resumable(p: PersistedState): boolean {
  return p.sequenceStartedAt !== null && p.state !== OPEN;
}

export class HcMachine {
  private p: PersistedState;
  private readonly cfg: HcConfig;
  private readonly clock: Clock;
  private readonly envoy: EnvoyPort;
  private readonly store: StateStore;
  private readonly log: Logger;

  private cancelBuffer: (() => void) | undefined;
  private cancelDeadline: (() => void) | undefined;
  private cancelPoll: (() => void) | undefined;
  private cancelWitnessWindow: (() => void) | undefined;
  private readonly waiters = new Set<Waiter>();
  private pendingDrains: ((answer: ControlAnswer) => void)[] = [];
  private drainCall: Promise<void> | undefined;
  private lastDrainError = '';
  private polling = false;
  private pollSoon = false;
  private stopped = true;
  private failures = 0;

  /** The last in-flight count read from Envoy (null before the first count). */
  inFlight: number | null = null;
  lastPollAt: number | null = null;
  lastPollError: string | null = null;
  readonly counters: MachineCounters = { pollErrors: 0, drainCallErrors: 0, drainTimeouts: 0, refusedEvents: 0, stateFileErrors: 0, transitions: 0, faultEntries: 0, displacedWaiters: 0 };
  /** In-flight read at each of the six events (for /metrics). */
  readonly eventInFlight: EventInFlight;

  constructor(options: HcMachineOptions) {
    this.cfg = options.config;
    this.clock = options.clock;
    this.envoy = options.envoy;
    this.store = options.store;
    this.log = options.log;
    this.eventInFlight = new EventInFlight(this.envoy, this.clock, EVENT_NAMES.length);
    this.p = freshState(this.clock.now(), "starting: waiting for Envoy's /ready");
  }

  /** Loads the state file (resuming a started sequence), arms the timers and starts polling. */
  start(): void {
    this.stopped = false;
    const loaded = this.store.load();
    if (loaded && resumable(loaded)) {
      this.p = loaded;
      this.log('info', 'resuming from the state file', { state: loaded.state, flow: loaded.flow, enteredAt: isoTime(loaded.enteredAt) });
      if (this.p.state === CLOSED) this.releaseWaiters();
      const now = this.clock.now();
      this.p.events.forEach((mark, i) => {
        if (mark && mark.at > now && i > 3) this.eventInFlight.marked(i, mark.at);
      });
    } else {
      this.p = freshState(this.clock.now(), this.p.reason);
      this.save();
    }
    this.schedule();
    this.schedulePoll(0);
  }

  stop(): void {
    this.stopped = true;
    this.eventInFlight.stop();
    for (const cancel of [this.cancelBuffer, this.cancelDeadline, this.cancelPoll, this.cancelWitnessWindow]) cancel?.();
    this.cancelBuffer = this.cancelDeadline = this.cancelPoll = this.cancelWitnessWindow = undefined;
    for (const w of this.waiters) {
      w.cancelTimer();
      w.resolve({ status: 503, body: this.p.state });
    }
    this.waiters.clear();
    this.resolvePendingDrains({ status: 503, json: { draining: false, state: this.p.state, reason: 'the sidecar is stopping' } });
  }

  get state(): HcState {
    return this.p.state;
  }

  /** The sequence this sidecar runs on /drain (from its config). */
  get sequence(): string {
    return this.cfg.sequence;
  }

  /** A copy of the persisted context (for /state, metrics and tests). */
  get context(): Readonly<PersistedState> {
    return structuredClone(this.p);
  }

  // ---- health answers (synchronous, in memory) ----

  lbHealth(): HealthAnswer {
    return lbAnswer(this.p.state, this.p.flow, this.cfg.softSignal);
  }

  readiness(): HealthAnswer {
    return readinessAnswer(this.p.state);
  }

  liveness(): HealthAnswer {
    return livenessAnswer(this.p.state);
  }

  /** The latest time the current sequence can finish, or null when none is running to an end. */
  finishBy(): number | null {
    const p = this.p;
    if (p.sequenceStartedAt === null) return null;
    if (p.flow === 'manual' && p.bufferStartedAt === null && p.events[2] === null) return null;
    return p.sequenceStartedAt + sequenceBoundMs(this.cfg) + BOUND_MARGIN_MS;
  }

  // ---- requests ----

  /**
   * POST /drain. Idempotent. With the termination witness required (and not overridden), the
   * sequence starts only if a /wait-closed request is waiting or arrives within the window.
   */
  requestDrain(options: { witness: boolean }): Promise<ControlAnswer> {
    if (!this.drainWouldStartSomething()) return Promise.resolve(this.drainAnswer(200, 'the sequence is already running'));
    const check = transition(this.flow(), this.p.state, 'drain', this.facts());
    if (!check.ok) return Promise.resolve(this.refuse('drain', check.reason));
    const witnessNeeded = options.witness && this.cfg.terminationWitness.required;
    if (!witnessNeeded) return Promise.resolve(this.startDrain(options.witness ? 'drain requested' : 'drain requested without a termination witness'));
    if (this.waiters.size > 0) return Promise.resolve(this.startDrain('drain requested, pod termination witnessed'));
    return new Promise((resolve) => {
      this.pendingDrains.push(resolve);
      if (this.cancelWitnessWindow === undefined) {
        this.log('info', 'drain requested: waiting for the termination witness', { windowSeconds: this.cfg.terminationWitness.windowSeconds });
        this.cancelWitnessWindow = this.clock.setTimer(this.cfg.terminationWitness.windowSeconds * 1000, () => {
          this.cancelWitnessWindow = undefined;
          this.log('warn', NO_WITNESS_REASON, { windowSeconds: this.cfg.terminationWitness.windowSeconds });
          this.resolvePendingDrains({ status: 200, json: { draining: false, state: this.p.state, reason: NO_WITNESS_REASON } });
        });
      }
    });
  }

  closeLb(): ControlAnswer {
    return this.request('close-lb', 'close-lb requested');
  }

  close(): ControlAnswer {
    return this.request('close', 'close requested');
  }

  reopen(): ControlAnswer {
    return this.request('reopen', 'reopen requested');
  }

  /**
   * GET /wait-closed on the witness port (istio-proxy's preStop): resolves when the sequence has
   * finished, or with 504 at its bound. Its only other effect is to witness a pod termination for a
   * pending /drain. `source` is the caller's address: a source already holding
   * MAX_WAITERS_PER_SOURCE gives up its oldest waiter, a full set the oldest of the source holding
   * the most (answered 503); the new waiter always waits.
   */
  waitClosed(source = ''): WaitClosed {
    if (this.p.state === CLOSED) return { answer: Promise.resolve({ status: 200, body: CLOSED }), cancel: () => {} };
    this.makeRoomFor(source);
    const now = this.clock.now();
    const own = now + this.cfg.terminationWitness.windowSeconds * 1000 + sequenceBoundMs(this.cfg) + BOUND_MARGIN_MS;
    const deadline = Math.max(own, this.finishBy() ?? 0);
    let waiter!: Waiter;
    const answer = new Promise<HealthAnswer>((resolve) => {
      const cancelTimer = this.clock.setTimer(deadline - now, () => {
        this.waiters.delete(waiter);
        this.log('warn', '/wait-closed reached its bound before the sequence finished', { state: this.p.state });
        resolve({ status: 504, body: this.p.state });
      });
      waiter = { source, resolve, cancelTimer };
    });
    this.waiters.add(waiter);
    if (this.pendingDrains.length > 0) {
      this.cancelWitnessWindow?.();
      this.cancelWitnessWindow = undefined;
      this.resolvePendingDrains(this.startDrain('drain requested, pod termination witnessed'));
    }
    return {
      answer,
      cancel: () => {
        waiter.cancelTimer();
        this.waiters.delete(waiter);
      },
    };
  }

  get waiterCount(): number {
    return this.waiters.size;
  }

  private makeRoomFor(source: string): void {
    const bySource = new Map<string, Waiter[]>();
    for (const w of this.waiters) bySource.set(w.source, [...(bySource.get(w.source) ?? []), w]);
    const own = bySource.get(source) ?? [];
    let victim: Waiter | undefined;
    if (own.length >= MAX_WAITERS_PER_SOURCE) victim = own[0];
    else if (this.waiters.size >= MAX_WAITERS) victim = [...bySource.values()].reduce((a, b) => (b.length > a.length ? b : a))[0];
    if (victim === undefined) return;
    victim.cancelTimer();
    this.waiters.delete(victim);
    this.counters.displacedWaiters++;
    this.log('warn', '/wait-closed waiter displaced: too many waiting', { source: victim.source, newcomer: source, waiters: this.waiters.size + 1 });
    victim.resolve({ status: 503, body: `${this.p.state}: ${DISPLACED_REASON}` });
  }

  // ---- the table and its effects ----

  private flow() {
    return this.p.flow ?? this.cfg.sequence;
  }

  private facts(): GuardFacts {
    return { proxyDrained: this.p.events[2] !== null, sequenceStarted: this.p.sequenceStartedAt !== null };
  }

  private drainWouldStartSomething(): boolean {
    const p = this.p;
    if (p.flow === null) return true;
    return p.flow === 'manual' && p.bufferStartedAt === null && p.events[2] === null && p.state !== CLOSED;
  }

  private drainAnswer(status: number, reason: string): ControlAnswer {
    const finishBy = this.finishBy();
    return { status, json: { draining: true, state: this.p.state, reason, finishBy: isoTime(finishBy) } };
  }

  private startDrain(reason: string): ControlAnswer {
    const result = this.fire('drain', reason);
    return result.ok ? this.drainAnswer(202, reason) : this.refuse('drain', result.reason);
  }

  private request(event: HcEvent, reason: string): ControlAnswer {
    const result = this.fire(event, reason);
    if (!result.ok) return this.refuse(event, result.reason);
    return { status: 200, json: { ok: true, state: this.p.state, changed: result.changed } };
  }

  private refuse(event: HcEvent, reason: string): ControlAnswer {
    return { status: 409, json: { ok: false, draining: false, state: this.p.state, event, reason } };
  }

  private resolvePendingDrains(answer: ControlAnswer): void {
    const pending = this.pendingDrains;
    this.pendingDrains = [];
    for (const resolve of pending) resolve(answer);
  }

  /** Applies one event: table lookup, context update, state change, timers, state file. */
  private fire(event: HcEvent, reason: string): TransitionResult {
    const result = transition(this.flow(), this.p.state, event, this.facts());
    if (!result.ok) {
      if (REQUEST_EVENTS.has(event)) {
        this.counters.refusedEvents++;
        this.log('warn', `refused '${event}'`, { state: this.p.state, flow: this.flow(), reason: result.reason });
      }
      return result;
    }
    const now = this.clock.now();
    const markedBefore = this.p.events.map((mark) => mark !== null);
    const needsDrainCall = this.applyEvent(event, now);
    if (result.changed) this.enter(result.to, now, reason);
    this.markEvents(now);
    this.p.events.forEach((mark, i) => {
      if (!mark || markedBefore[i]) return;
      // [3] and [4] take the poll's counts (pollOnce, and the count that ended the drain).
      if (i === 3 && this.inFlight !== null) this.eventInFlight.record(i, this.inFlight);
      else if (i !== 2 && i !== 3) this.eventInFlight.marked(i, mark.at);
    });
    this.save();
    if (needsDrainCall) void this.ensureDrainCall();
    this.schedule();
    this.pollNow();
    return result;
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
        } else if (p.flow === 'manual' && p.bufferStartedAt === null && p.events[2] === null) {
          // After /close-lb: the LB has been failing since [1]; wait what is left of its buffer.
          p.bufferStartedAt = p.events[0]?.at ?? lbFailingSince;
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
        p.events[3] = { at: now, estimated: false, ...(timedOut ? { note: `drain timeout: ${this.inFlight ?? 'unknown'} still in flight` } : {}) };
        p.drainTimedOut = timedOut;
        if (timedOut) {
          this.counters.drainTimeouts++;
          this.log('warn', 'drain timeout reached before in-flight reached 0', { inFlight: this.inFlight, drainTimeoutSeconds: this.cfg.drainTimeoutSeconds });
        }
        if (p.flow === 'drain-first' && !inFault) p.bufferStartedAt = now;
        return false;
      }
      case 'reopen':
      case 'envoy-ok':
      case 'envoy-fault':
        return false;
    }
  }

  /** Records [3] (once); the call itself goes out after the state file has it. */
  private startProxyDrain(now: number): boolean {
    if (this.p.events[2] !== null) return false;
    this.p.events[2] = { at: now, estimated: false };
    return true;
  }

  private enter(to: HcState, now: number, reason: string): void {
    const from = this.p.state;
    this.p.state = to;
    this.p.enteredAt = now;
    this.p.reason = reason;
    this.p.history.push({ state: to, at: now, reason });
    if (this.p.history.length > HISTORY_LIMIT) this.p.history.splice(0, this.p.history.length - HISTORY_LIMIT);
    this.counters.transitions++;
    if (to === FAULT) this.counters.faultEntries++;
    if (to === OPEN) this.resetSequence();
    this.log(to === FAULT ? 'warn' : 'info', `${from} -> ${to}`, { reason, flow: this.p.flow });
    if (to === CLOSED) this.releaseWaiters();
  }

  private resetSequence(): void {
    const p = this.p;
    p.flow = null;
    p.sequenceStartedAt = p.bufferStartedAt = p.drainAckedAt = null;
    p.drainTimedOut = false;
    p.events = EVENT_NAMES.map(() => null);
    this.eventInFlight.reset();
  }

  /** Records [1], [2], [5], [6] from what the endpoints now answer (only within a sequence). */
  private markEvents(now: number): void {
    const p = this.p;
    if (p.sequenceStartedAt === null) return;
    const since = p.state === FAULT ? p.enteredAt : now;
    const faultNote = p.state === FAULT ? { note: `FAULT: ${p.reason}` } : {};
    const lb = this.lbHealth();
    if (lb.status !== 200 && p.events[0] === null) {
      p.events[0] = { at: since, estimated: false, ...(lb.status === 503 ? faultNote : { note: `soft signal ${lb.status}` }) };
    }
    if (lb.status === 503 && p.events[4] === null) {
      const at = since + this.cfg.lbBufferSeconds * 1000;
      p.events[4] = { at, estimated: true, note: 'expected: LB answered 503 + lbBuffer' };
      p.events[5] = { at, estimated: true, note: 'expected at DOWN when the LB resets sessions on DOWN' };
    }
    if (this.readiness().status !== 200 && p.events[1] === null) p.events[1] = { at: since, estimated: false, ...faultNote };
  }

  private releaseWaiters(): void {
    for (const w of this.waiters) {
      w.cancelTimer();
      w.resolve({ status: 200, body: CLOSED });
    }
    this.waiters.clear();
  }

  private save(): void {
    try {
      this.store.save(this.p);
    } catch (err) {
      this.counters.stateFileErrors++;
      this.log('error', 'could not write the state file', { error: (err as Error).message });
    }
  }

  /** (Re)arms the LB-buffer and drain-timeout timers from the context. */
  private schedule(): void {
    this.cancelBuffer?.();
    this.cancelDeadline?.();
    this.cancelBuffer = this.cancelDeadline = undefined;
    if (this.stopped) return;
    const p = this.p;
    const now = this.clock.now();
    const drainSent = p.events[2] !== null;
    if (p.bufferStartedAt !== null && (p.state === CLOSING || (p.state === FAULT && !drainSent))) {
      const at = p.bufferStartedAt + this.cfg.lbBufferSeconds * 1000;
      this.cancelBuffer = this.clock.setTimer(at - now, () => {
        this.cancelBuffer = undefined;
        this.fire('buffer-elapsed', `LB buffer of ${this.cfg.lbBufferSeconds}s elapsed`);
      });
    }
    if (drainSent && p.events[3] === null && (p.state === DRAINING || p.state === FAULT)) {
      const at = p.events[2]!.at + this.cfg.drainTimeoutSeconds * 1000;
      this.cancelDeadline = this.clock.setTimer(at - now, () => {
        this.cancelDeadline = undefined;
        this.fire('drain-timeout', `drain timeout of ${this.cfg.drainTimeoutSeconds}s reached`);
      });
    }
  }

  // ---- the poll loop ----

  /** What the next poll asks Envoy: /ready before the drain, the in-flight count during it. */
  private pollMode(): 'ready' | 'count' | 'none' {
    const p = this.p;
    if (p.state === CLOSED) return 'none';
    if (p.events[2] === null) return 'ready';
    return p.events[3] === null ? 'count' : 'none';
  }

  private schedulePoll(ms: number): void {
    this.cancelPoll?.();
    this.cancelPoll = this.clock.setTimer(ms, () => {
      this.cancelPoll = undefined;
      void this.pollOnce();
    });
  }

  /** A state change may change what to poll: poll at once rather than one interval later. */
  private pollNow(): void {
    if (this.stopped) return;
    if (this.polling) this.pollSoon = true;
    else this.schedulePoll(0);
  }

  private async pollOnce(): Promise<void> {
    if (this.stopped || this.polling) return;
    const mode = this.pollMode();
    if (mode === 'none') return;
    this.polling = true;
    try {
      if (mode === 'count') {
        await this.ensureDrainCall();
        if (this.p.drainAckedAt === null) throw new Error(`drain_listeners failed: ${this.lastDrainError}`);
        const n = await this.envoy.inFlight();
        this.pollSucceeded();
        this.inFlight = n;
        this.eventInFlight.record(2, n, true);
        if (n === 0 && this.pollMode() === 'count') this.fire('zero', 'in-flight reached 0');
      } else {
        const serverState = await this.envoy.serverState();
        if (serverState !== 'LIVE') throw new EnvoyNotLive(`Envoy /ready says ${serverState}`);
        this.pollSucceeded();
        if (this.p.state === FAULT) this.fire('envoy-ok', 'Envoy admin answers LIVE');
      }
    } catch (err) {
      this.pollFailed(err as Error);
    } finally {
      this.polling = false;
      if (!this.stopped) {
        const soon = this.pollSoon;
        this.pollSoon = false;
        this.schedulePoll(soon ? 0 : this.cfg.pollIntervalSeconds * 1000);
      }
    }
  }

  private pollSucceeded(): void {
    this.failures = 0;
    this.lastPollAt = this.clock.now();
    this.lastPollError = null;
  }

  private pollFailed(err: Error): void {
    this.failures++;
    this.counters.pollErrors++;
    this.lastPollAt = this.clock.now();
    this.lastPollError = err.message;
    const detail = `${err.message} (${this.failures} consecutive failed polls)`;
    if (this.failures === 1 || this.failures === this.cfg.faultAfterFailures) this.log('warn', 'Envoy admin poll failed', { error: err.message, failures: this.failures });
    if (this.p.state === FAULT) {
      this.p.reason = detail;
      return;
    }
    if (this.failures >= this.cfg.faultAfterFailures) this.fire('envoy-fault', detail);
  }

  /** Sends the drain calls once; retried by the poll loop until acked. */
  private ensureDrainCall(): Promise<void> {
    if (this.p.events[2] === null || this.p.drainAckedAt !== null) return Promise.resolve();
    this.drainCall ??= this.envoy
      .drainListeners()
      .then(
        () => {
          this.p.drainAckedAt = this.clock.now();
          this.save();
          this.log('info', `Envoy drained: ${this.envoy.profile().drainCalls.join(', ')} answered 200`);
        },
        (err: Error) => {
          this.counters.drainCallErrors++;
          this.lastDrainError = err.message;
          this.log('warn', 'drain_listeners failed; retrying on the next poll', { error: err.message });
        },
      )
      .finally(() => {
        this.drainCall = undefined;
      });
    return this.drainCall;
  }

  // ---- views ----

  /** The JSON of GET /state. */
  snapshot(): Record<string, unknown> {
    const p = this.p;
    const iso = isoTime;
    return {
      state: p.state,
      enteredAt: iso(p.enteredAt),
      reason: p.reason,
      sequence: this.cfg.sequence,
      flow: p.flow,
      finished: p.state === CLOSED,
      finishBy: iso(this.finishBy()),
      inFlight: this.inFlight,
      drainTimedOut: p.drainTimedOut,
      proxyDrained: p.events[2] !== null,
      envoy: { lastPollAt: iso(this.lastPollAt), lastPollError: this.lastPollError, consecutiveFailures: this.failures, proxy: this.envoy.profile() },
      health: { lb: this.lbHealth(), readiness: this.readiness(), liveness: this.liveness() },
      events: EVENT_NAMES.map((name, i) => {
        const mark: EventMark | null = p.events[i] ?? null;
        return { id: i + 1, name, at: mark ? iso(mark.at) : null, estimated: mark?.estimated ?? false, ...(mark?.note ? { note: mark.note } : {}) };
      }),
      waiters: this.waiters.size,
      history: p.history.map((h) => ({ state: h.state, at: iso(h.at), reason: h.reason })),
    };
  }
}

/**
 * The drain controller: holds the state, applies the transition table, runs the timers and the
 * Envoy poll loop. Every side effect goes through an injected port (clock, Envoy, state store,
 * log), so the unit tests drive it with a fake clock and never sleep.
 *
 * Timers are derived from the persisted context (`schedule()`), so resuming after a restart is
 * "load the file, schedule()": the remaining time of every wait is computed from the recorded
 * timestamps, not restarted.
 */
import type { HcConfig } from '../contract/hc-config';
import { EnvoyPoller } from './envoy-poller';
import { EventInFlight } from './event-in-flight';
import { livenessAnswer, lbAnswer, readinessAnswer } from './health-answers';
import {
  BOUND_MARGIN_MS,
  bufferRunning,
  clampToNow,
  clearSequence,
  drainDeadlineRunning,
  freshState,
  heldAfterCloseLb,
  pollMode,
  proxyDrainStarted,
  resumable,
  sequenceBoundMs,
  sequenceStarted,
} from './sequence-context';
import { CLOSED, FAULT, OPEN, REQUEST_EVENTS, type HcEvent, type HcState } from './states';
import { transition, type GuardFacts, type TransitionResult } from './transitions';
import type { Clock, ControlAnswer, EnvoyPort, HealthAnswer, Logger, MachineCounters, PersistedState, StateStore } from './types';
import { Waiters, type WaitClosed } from './waiters';
import { rateLimitedLogger } from './log-limit';
import { EVENT, TERMINATION_EVENTS, type DrainBody, type EventKey, type FinalScrape, type RefusedBody, type StateBody, type StepBody } from '../contract/hc';

type DrainAnswer = ControlAnswer<DrainBody | RefusedBody>;
type StepAnswer = ControlAnswer<StepBody | RefusedBody>;

const HISTORY_LIMIT = 50;

/** The events whose in-flight is the poll's own count, not a read at the event's moment: [3] and [4]. */
const POLL_COUNTED_EVENTS: ReadonlySet<EventKey> = new Set([EVENT.proxyDrainStarts.key, EVENT.inFlightZero.key]);

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

export class HcMachine {
  private p: PersistedState;
  private readonly cfg: HcConfig;
  private readonly clock: Clock;
  private readonly envoy: EnvoyPort;
  private readonly store: StateStore;
  private readonly log: Logger;
  private readonly poller: EnvoyPoller;
  private readonly waiters: Waiters;
  /** The hc container's own preStop (GET /hc-stopping), waiting like /wait-closed but witnessing nothing. */
  private readonly hcHooks: Waiters;

  private cancelBuffer: (() => void) | undefined;
  private cancelDeadline: (() => void) | undefined;
  private cancelWitnessWindow: (() => void) | undefined;
  private pendingDrains: ((answer: DrainAnswer) => void)[] = [];
  private stopped = true;
  private finalScrape: FinalScrape | null = null;
  /**
   * Started without a state file to trust (none, or one that could not be): Envoy must say whether
   * the drain was sent before FAULT may end, since its /ready says LIVE either way.
   */
  private drainUnknown = false;
  private drainCheck: Promise<void> | undefined;

  readonly counters: MachineCounters = {
    pollErrors: 0,
    drainCallErrors: 0,
    drainTimeouts: 0,
    refusedEvents: 0,
    stateFileErrors: 0,
    transitions: 0,
    faultEntries: 0,
    displacedWaiters: 0,
    untrustedStateFiles: 0,
    refusedWitnessCallers: 0,
  };
  /** In-flight read at each of the six events (for /metrics). */
  readonly eventInFlight: EventInFlight;

  constructor(options: HcMachineOptions) {
    this.cfg = options.config;
    this.clock = options.clock;
    this.envoy = options.envoy;
    this.store = options.store;
    this.log = options.log;
    this.eventInFlight = new EventInFlight(this.envoy, this.clock);
    this.p = freshState(this.clock.now(), "starting: waiting for Envoy's /ready");
    // Displacements and bounds are a stranger's to cause as often as it likes: rate-limited.
    const waiterLog = rateLimitedLogger(this.log, this.clock);
    this.waiters = new Waiters(this.clock, waiterLog, this.counters, () => this.p.state);
    this.hcHooks = new Waiters(this.clock, waiterLog, this.counters, () => this.p.state);
    this.poller = new EnvoyPoller(
      {
        mode: () => pollMode(this.p),
        drainCallDue: () => proxyDrainStarted(this.p) && this.p.drainAckedAt === null,
        drainAcknowledged: (at) => {
          this.p.drainAckedAt = at;
          this.save();
        },
        counted: (n) => {
          // The poll's first count after the drain calls is in-flight at the proxy drain [3].
          this.eventInFlight.record(EVENT.proxyDrainStarts.key, n, true);
          if (n === 0 && pollMode(this.p) === 'count') this.fire('zero', 'in-flight reached 0');
        },
        live: () => {
          if (this.p.state !== FAULT) return;
          if (this.drainUnknown) this.checkDrain();
          else this.fire('envoy-ok', 'Envoy admin answers LIVE');
        },
        failed: (detail, failures) => {
          // Inside FAULT the reason tracks the latest failure; outside, enough of them in a row are FAULT.
          if (this.p.state === FAULT) this.p.reason = detail;
          else if (failures >= this.cfg.faultAfterFailures) this.fire('envoy-fault', detail);
        },
      },
      {
        clock: this.clock,
        envoy: this.envoy,
        log: this.log,
        counters: this.counters,
        intervalMs: this.cfg.pollIntervalSeconds * 1000,
        faultAfterFailures: this.cfg.faultAfterFailures,
      },
    );
  }

  /** Loads the state file (resuming a started sequence), arms the timers and starts polling. */
  start(): void {
    this.stopped = false;
    const loaded = this.store.load();
    if (loaded && resumable(loaded)) {
      // A recorded time ahead of the clock (a clock stepped back, within the state file's skew)
      // counts as now: no remaining wait is longer than the sequence's own bound.
      this.p = clampToNow(loaded, this.clock.now());
      this.log('info', 'resuming from the state file', { state: loaded.state, flow: loaded.flow, enteredAt: isoTime(loaded.enteredAt) });
      if (this.p.state === CLOSED) {
        this.waiters.releaseAll();
        this.hcHooks.releaseAll();
      }
      const now = this.clock.now();
      // The LB's own acts ([5], [6]) still to come: read the count at their expected time.
      TERMINATION_EVENTS.forEach(({ key, estimated }) => {
        const mark = this.p.events[key];
        if (mark && mark.at > now && estimated) this.eventInFlight.marked(key, mark.at);
      });
    } else {
      const untrusted = this.store.untrusted();
      if (untrusted !== null) this.counters.untrustedStateFiles++;
      this.p = freshState(
        this.clock.now(),
        untrusted === null ? this.p.reason : `the state file cannot be trusted (${untrusted}): checking whether Envoy was drained`,
      );
      this.drainUnknown = true;
      this.save();
    }
    this.schedule();
    this.poller.start();
  }

  stop(): void {
    this.stopped = true;
    this.eventInFlight.stop();
    this.poller.stop();
    for (const cancel of [this.cancelBuffer, this.cancelDeadline, this.cancelWitnessWindow]) cancel?.();
    this.cancelBuffer = this.cancelDeadline = this.cancelWitnessWindow = undefined;
    this.waiters.releaseAll({ status: 503, body: this.p.state });
    this.hcHooks.releaseAll({ status: 503, body: this.p.state });
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

  /** The long-lived part of the last count, for a drain that timed out: what held it (docs/long-lived.md). */
  private longLivedText(): string {
    const c = this.envoy.profile().lastCount;
    if (!c) return '';
    const parts = [
      ...(c.upgrades ? [`${c.upgrades} WebSocket (upgraded)`] : []),
      ...(c.otherConnections ? [`${c.otherConnections} TCP/passthrough connection(s)`] : []),
    ];
    return parts.length === 0 ? '' : ` (of them ${parts.join(' and ')}: long-lived, told nothing by the drain)`;
  }

  /** The last in-flight count read from Envoy (null before the first count). */
  get inFlight(): number | null {
    return this.poller.inFlight;
  }

  get lastPollAt(): number | null {
    return this.poller.lastPollAt;
  }

  get lastPollError(): string | null {
    return this.poller.lastPollError;
  }

  get waiterCount(): number {
    return this.waiters.size;
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
    if (!sequenceStarted(this.p) || heldAfterCloseLb(this.p)) return null;
    return this.p.sequenceStartedAt! + sequenceBoundMs(this.cfg) + BOUND_MARGIN_MS;
  }

  // ---- requests ----

  /**
   * POST /drain. Idempotent. With the termination witness required (and not overridden), the
   * sequence starts only if a /wait-closed request is waiting or arrives within the window.
   */
  requestDrain(options: { witness: boolean }): Promise<DrainAnswer> {
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

  closeLb(): StepAnswer {
    return this.request('close-lb', 'close-lb requested');
  }

  close(): StepAnswer {
    return this.request('close', 'close requested');
  }

  reopen(): StepAnswer {
    return this.request('reopen', 'reopen requested');
  }

  /**
   * GET /wait-closed on the witness port (istio-proxy's preStop): resolves when the sequence has
   * finished, or with 504 at its bound (waiters.ts). Its only other effect is to witness a pod
   * termination for a pending /drain. `source` is the caller's address.
   */
  waitClosed(source = ''): WaitClosed {
    if (this.p.state === CLOSED) return { answer: Promise.resolve({ status: 200, body: CLOSED }), cancel: () => {} };
    const own = this.clock.now() + this.cfg.terminationWitness.windowSeconds * 1000 + sequenceBoundMs(this.cfg) + BOUND_MARGIN_MS;
    const wait = this.waiters.add(source, Math.max(own, this.finishBy() ?? 0));
    if (this.pendingDrains.length > 0) {
      this.cancelWitnessWindow?.();
      this.cancelWitnessWindow = undefined;
      this.resolvePendingDrains(this.startDrain('drain requested, pod termination witnessed'));
    }
    return wait;
  }

  /**
   * GET /hc-stopping on the witness port: the hc container's preStop. Asks for the drain as POST
   * /drain does (so it starts only with the pod termination witnessed by /wait-closed) and answers
   * when the sequence has finished (200 CLOSED), at its bound (504), at once when nothing was
   * witnessed within the window (200: a restart of the hc alone must not drain the pod), or 503
   * when the drain was refused. `source` is the caller's address.
   */
  hcStopping(source = ''): WaitClosed {
    let cancelled = false;
    let inner: WaitClosed | undefined;
    const answer = this.requestDrain({ witness: true }).then((drain): Promise<HealthAnswer> | HealthAnswer => {
      const body = drain.json as { draining?: boolean; reason?: string };
      if (drain.status >= 400) return { status: 503, body: `${this.p.state}: ${body.reason ?? 'refused'}` };
      if (body.draining !== true) return { status: 200, body: `not draining: ${body.reason ?? ''}` };
      if (this.p.state === CLOSED || cancelled) return { status: 200, body: this.p.state };
      const deadline = Math.max(this.clock.now() + sequenceBoundMs(this.cfg) + BOUND_MARGIN_MS, this.finishBy() ?? 0);
      inner = this.hcHooks.add(source, deadline);
      return inner.answer;
    });
    return {
      answer,
      cancel: () => {
        cancelled = true;
        inner?.cancel();
      },
    };
  }

  /**
   * Asks Envoy whether a drain already reached it (a start without a trusted state file): drained,
   * the sequence resumes at its end ('drain-found'); not drained, FAULT ends ('envoy-ok'). A failed
   * question is asked again at the next LIVE poll; meanwhile the LB hears 503.
   */
  private checkDrain(): void {
    if (this.drainCheck) return;
    this.drainCheck = this.envoy
      .drainSent()
      .then(
        (sent) => {
          if (this.stopped || !this.drainUnknown || this.p.state !== FAULT) return;
          this.drainUnknown = false;
          if (sent) this.fire('drain-found', "Envoy's listeners were already drained: finishing the sequence (FAULT until then)");
          else this.fire('envoy-ok', 'Envoy admin answers LIVE, and no drain reached it');
        },
        (err: Error) => {
          this.p.reason = `cannot tell whether Envoy was drained: ${err.message}`;
        },
      )
      .finally(() => {
        this.drainCheck = undefined;
      });
  }

  // ---- the table and its effects ----

  private flow() {
    return this.p.flow ?? this.cfg.sequence;
  }

  private facts(): GuardFacts {
    return { proxyDrained: proxyDrainStarted(this.p), sequenceStarted: sequenceStarted(this.p) };
  }

  /** A /drain starts the sequence, or continues one that /close-lb holds; anything else is already running. */
  private drainWouldStartSomething(): boolean {
    return this.p.flow === null || (heldAfterCloseLb(this.p) && this.p.state !== CLOSED);
  }

  private drainAnswer(status: number, reason: string): DrainAnswer {
    return { status, json: { draining: true, state: this.p.state, reason, finishBy: isoTime(this.finishBy()) } };
  }

  private startDrain(reason: string): DrainAnswer {
    const result = this.fire('drain', reason);
    return result.ok ? this.drainAnswer(202, reason) : this.refuse('drain', result.reason);
  }

  private request(event: HcEvent, reason: string): StepAnswer {
    const result = this.fire(event, reason);
    if (!result.ok) return this.refuse(event, result.reason);
    return { status: 200, json: { ok: true, state: this.p.state, changed: result.changed } };
  }

  private refuse(event: HcEvent, reason: string): ControlAnswer<RefusedBody> {
    return { status: 409, json: { ok: false, draining: false, state: this.p.state, event, reason } };
  }

  private resolvePendingDrains(answer: DrainAnswer): void {
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
    const markedBefore = new Set(TERMINATION_EVENTS.filter(({ key }) => this.p.events[key] !== null).map(({ key }) => key));
    const needsDrainCall = this.applyEvent(event, now);
    if (result.changed) this.enter(result.to, now, reason);
    this.markEvents(now);
    TERMINATION_EVENTS.forEach(({ key }) => {
      const mark = this.p.events[key];
      if (!mark || markedBefore.has(key)) return;
      // [3] and [4] take the poll's counts (the poller's counted(), and the count that ended the drain).
      if (!POLL_COUNTED_EVENTS.has(key)) this.eventInFlight.marked(key, mark.at);
      else if (key === EVENT.inFlightZero.key && this.inFlight !== null) this.eventInFlight.record(key, this.inFlight);
    });
    this.save();
    if (needsDrainCall) void this.poller.ensureDrainCall();
    this.schedule();
    this.poller.pollNow();
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
        p.events.inFlightZero = {
          at: now,
          estimated: false,
          ...(timedOut ? { note: `drain timeout: ${this.inFlight ?? 'unknown'} still in flight${held}` } : {}),
        };
        p.drainTimedOut = timedOut;
        if (timedOut) {
          this.counters.drainTimeouts++;
          this.log('warn', `drain timeout reached before in-flight reached 0${held}`, {
            inFlight: this.inFlight,
            lastCount: this.envoy.profile().lastCount,
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
    this.counters.transitions++;
    if (to === FAULT) this.counters.faultEntries++;
    if (to === OPEN) {
      clearSequence(this.p);
      this.eventInFlight.reset();
    }
    this.log(to === FAULT ? 'warn' : 'info', `${from} -> ${to}`, { reason, flow: this.p.flow });
    if (to === CLOSED) {
      this.waiters.releaseAll();
      this.hcHooks.releaseAll();
    }
  }

  /** Records [1], [2], [5], [6] from what the endpoints now answer (only within a sequence). */
  private markEvents(now: number): void {
    const p = this.p;
    if (!sequenceStarted(p)) return;
    const e = p.events;
    const since = p.state === FAULT ? p.enteredAt : now;
    const faultNote = p.state === FAULT ? { note: `FAULT: ${p.reason}` } : {};
    const lb = this.lbHealth();
    if (lb.status !== 200 && e.lbHealthFails === null) {
      e.lbHealthFails = { at: since, estimated: false, ...(lb.status === 503 ? faultNote : { note: `soft signal ${lb.status}` }) };
    }
    if (lb.status === 503 && e.lbMarksDown === null) {
      const at = since + this.cfg.lbBufferSeconds * 1000;
      e.lbMarksDown = { at, estimated: true, note: 'expected: LB answered 503 + lbBuffer' };
      e.lbResetsSessions = { at, estimated: true, note: 'expected at DOWN when the LB resets sessions on DOWN' };
    }
    if (this.readiness().status !== 200 && e.readinessFails === null) e.readinessFails = { at: since, estimated: false, ...faultNote };
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
    if (bufferRunning(p)) {
      this.cancelBuffer = this.clock.setTimer(p.bufferStartedAt! + this.cfg.lbBufferSeconds * 1000 - now, () => {
        this.cancelBuffer = undefined;
        this.fire('buffer-elapsed', `LB buffer of ${this.cfg.lbBufferSeconds}s elapsed`);
      });
    }
    if (drainDeadlineRunning(p)) {
      this.cancelDeadline = this.clock.setTimer(p.events.proxyDrainStarts!.at + this.cfg.drainTimeoutSeconds * 1000 - now, () => {
        this.cancelDeadline = undefined;
        this.fire('drain-timeout', `drain timeout of ${this.cfg.drainTimeoutSeconds}s reached`);
      });
    }
  }

  /** Records the final-scrape decision (after SIGTERM) for GET /state; returns it for the outcome to be filled in. */
  noteFinalScrape(decision: FinalScrape): FinalScrape {
    this.finalScrape = decision;
    return decision;
  }

  // ---- views ----

  /** The body of GET /state. */
  snapshot(): StateBody {
    const p = this.p;
    return {
      state: p.state,
      enteredAt: isoTime(p.enteredAt),
      reason: p.reason,
      sequence: this.cfg.sequence,
      flow: p.flow,
      finished: p.state === CLOSED,
      finishBy: isoTime(this.finishBy()),
      inFlight: this.inFlight,
      drainTimedOut: p.drainTimedOut,
      proxyDrained: proxyDrainStarted(p),
      drainAckedAt: isoTime(p.drainAckedAt),
      envoy: {
        lastPollAt: isoTime(this.lastPollAt),
        lastPollError: this.lastPollError,
        consecutiveFailures: this.poller.failures,
        proxy: this.envoy.profile(),
      },
      health: { lb: this.lbHealth(), readiness: this.readiness(), liveness: this.liveness() },
      events: TERMINATION_EVENTS.map(({ id, key, name }) => {
        const mark = p.events[key];
        return { id, name, at: mark ? isoTime(mark.at) : null, estimated: mark?.estimated ?? false, ...(mark?.note ? { note: mark.note } : {}) };
      }),
      waiters: this.waiters.size,
      history: p.history.map((h) => ({ state: h.state, at: isoTime(h.at), reason: h.reason })),
      finalScrape: this.finalScrape ? { ...this.finalScrape } : null,
    };
  }
}

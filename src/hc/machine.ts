/**
 * The drain controller, composed from four pieces along its seams, each handed only the part of
 * the config it needs: the table core (`machine-core.ts`: the context and fire(event)), the
 * answers to the control and witness ports (`machine-requests.ts`), the timers
 * (`machine-timers.ts`) and the read-side view (`machine-view.ts`). What this file decides itself
 * is what no piece can see alone: the Envoy poll loop's verdicts (a count of 0, FAULT after enough
 * failures, whether a drain already reached Envoy), start (resume or begin afresh) and stop. To the
 * servers, the metrics and the tests it is the sidecar's one handle: one method per thing a port
 * asks (health(), requestDrain(), step(), waitClosed(), hcStopping(), snapshot()), so none of them
 * wires the pieces. Every side effect goes through an injected port (clock, Envoy, state store,
 * log), so the unit tests drive it with a fake clock and never sleep.
 *
 * Timers are derived from the persisted context (`SequenceTimers.arm`), so resuming after a restart
 * is "load the file, arm the timers": the remaining time of every wait is computed from the recorded
 * timestamps, not restarted.
 */
import type { HcConfig } from '../contract/hc-config';
import { EVENT, TERMINATION_EVENTS, type FinalScrape, type StateBody } from '../contract/hc';
import { EnvoyPoller } from './envoy-poller';
import { EventInFlight } from './event-in-flight';
import { rateLimitedLogger } from './log-limit';
import { SequenceCore } from './machine-core';
import { PortAnswers, type DrainAnswer, type ManualStep, type StepAnswer } from './machine-requests';
import { SequenceTimers } from './machine-timers';
import { healthOf, isoTime, stateBody, type HealthAnswers } from './machine-view';
import { clampToNow, freshState, pollMode, proxyDrainStarted, resumable } from './sequence-context';
import { CLOSED, FAULT, WARMING, type HcState } from './states';
import type { Clock, EnvoyPort, Logger, MachineCounters, PersistedState, StateStore } from './types';
import type { WaitClosed } from './waiters';

export { NO_WITNESS_REASON } from './machine-requests';

/** The log line of the kubelet's first readiness probe answered in WARMING (the cluster's witnesses read it). */
export const READINESS_SEEN = "the kubelet's readiness probe was answered 200";
export { isoTime } from './machine-view';

export type { ManualStep } from './machine-requests';

export interface HcMachineOptions {
  readonly config: HcConfig;
  readonly clock: Clock;
  readonly envoy: EnvoyPort;
  readonly store: StateStore;
  readonly log: Logger;
}

export class HcMachine {
  private readonly cfg: HcConfig;
  private readonly clock: Clock;
  private readonly envoy: EnvoyPort;
  private readonly store: StateStore;
  private readonly log: Logger;
  private readonly core: SequenceCore;
  private readonly timers: SequenceTimers;
  private readonly answers: PortAnswers;
  private readonly poller: EnvoyPoller;
  private stopped = true;
  private finalScrape: FinalScrape | null = null;
  /**
   * Started without a state file to trust (none, or one that could not be): Envoy must say whether
   * the drain was sent before FAULT may end, since its /ready says LIVE either way.
   */
  private drainUnknown = false;
  private drainCheck: Promise<void> | undefined;
  private servingCheck: Promise<void> | undefined;
  /**
   * When a kubelet source's readiness probe was first answered 200 in the current WARMING (the start
   * hold counts from it); kept in memory: WARMING is never resumed from the state file, a restarted
   * sidecar warms again.
   */
  private readinessSeenAt: number | null = null;

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
    const cfg = (this.cfg = options.config);
    this.clock = options.clock;
    this.envoy = options.envoy;
    this.store = options.store;
    this.log = options.log;
    this.eventInFlight = new EventInFlight(this.envoy, this.clock);
    this.core = new SequenceCore(cfg, {
      clock: this.clock,
      envoy: this.envoy,
      store: this.store,
      log: this.log,
      counters: this.counters,
      eventInFlight: this.eventInFlight,
      inFlight: () => this.poller.inFlight,
      releaseHolds: () => this.answers.releaseHolds(),
      fired: (needsDrainCall) => {
        // Out of WARMING the probe seen is forgotten: the next WARMING counts from its own.
        if (this.core.state !== WARMING) this.readinessSeenAt = null;
        if (needsDrainCall) void this.poller.ensureDrainCall();
        this.armTimers();
        this.poller.pollNow();
      },
    });
    this.timers = new SequenceTimers(cfg, this.clock, (event, reason) => this.core.fire(event, reason));
    this.answers = new PortAnswers(cfg, this.core, this.timers, {
      clock: this.clock,
      log: this.log,
      waiterLog: rateLimitedLogger(this.log, this.clock),
      counters: this.counters,
    });
    this.poller = new EnvoyPoller(
      {
        mode: () => pollMode(this.core.context),
        drainCallDue: () => proxyDrainStarted(this.core.context) && this.core.context.drainAckedAt === null,
        drainAcknowledged: (at) => this.core.drainAcknowledged(at),
        counted: (n) => {
          // The poll's first count after the drain calls is in-flight at the proxy drain [3].
          this.eventInFlight.record(EVENT.proxyDrainStarts.key, n, true);
          if (n === 0 && pollMode(this.core.context) === 'count') this.core.fire('zero', 'in-flight reached 0');
        },
        live: () => {
          if (this.core.state !== FAULT) return;
          if (this.drainUnknown) this.checkDrain();
          else this.checkServing();
        },
        failed: (detail, failures) => {
          // Inside FAULT the reason tracks the latest failure; outside, enough of them in a row are FAULT.
          if (this.core.state === FAULT) this.core.setReason(detail);
          else if (failures >= cfg.faultAfterFailures) this.core.fire('envoy-fault', detail);
        },
      },
      {
        clock: this.clock,
        envoy: this.envoy,
        log: this.log,
        counters: this.counters,
        intervalMs: cfg.pollIntervalSeconds * 1000,
        faultAfterFailures: cfg.faultAfterFailures,
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
      const p = clampToNow(loaded, this.clock.now());
      this.core.adopt(p, { save: false });
      this.log('info', 'resuming from the state file', { state: loaded.state, flow: loaded.flow, enteredAt: isoTime(loaded.enteredAt) });
      if (p.state === CLOSED) this.answers.releaseHolds();
      const now = this.clock.now();
      // The LB's own acts ([5], [6]) still to come: read the count at their expected time.
      TERMINATION_EVENTS.forEach(({ key, estimated }) => {
        const mark = p.events[key];
        if (mark && mark.at > now && estimated) this.eventInFlight.marked(key, mark.at);
      });
    } else {
      const untrusted = this.store.untrusted();
      if (untrusted !== null) this.counters.untrustedStateFiles++;
      const reason = untrusted === null ? this.core.context.reason : `the state file cannot be trusted (${untrusted}): checking whether Envoy was drained`;
      this.core.adopt(freshState(this.clock.now(), reason), { save: true });
      this.drainUnknown = true;
    }
    this.armTimers();
    this.poller.start();
  }

  stop(): void {
    this.stopped = true;
    this.eventInFlight.stop();
    this.poller.stop();
    this.timers.stop();
    this.answers.stop();
  }

  get state(): HcState {
    return this.core.state;
  }

  /** The sequence this sidecar runs on /drain (from its config). */
  get sequence(): string {
    return this.cfg.sequence;
  }

  /** A copy of the persisted context (for /state, metrics and tests). */
  get context(): Readonly<PersistedState> {
    return structuredClone(this.core.context);
  }

  /** The last in-flight count read from Envoy (null before the first count). */
  get inFlight(): number | null {
    return this.poller.inFlight;
  }

  get waiterCount(): number {
    return this.answers.waiterCount;
  }

  /** What the LB, readiness and liveness are told now (synchronous, in memory: a probe never waits). */
  health(): HealthAnswers {
    return healthOf(this.core.context, this.cfg.softSignal);
  }

  // ---- requests (machine-requests.ts) ----

  requestDrain(options: { witness: boolean }): Promise<DrainAnswer> {
    return this.answers.requestDrain(options);
  }

  /** A manual step: POST /close-lb, /close or /reopen. */
  step(event: ManualStep): StepAnswer {
    return this.answers.step(event);
  }

  waitClosed(source = ''): WaitClosed {
    return this.answers.waitClosed(source);
  }

  hcStopping(source = ''): WaitClosed {
    return this.answers.hcStopping(source);
  }

  /** Records the final-scrape decision (after SIGTERM) for GET /state; returns it for the outcome to be filled in. */
  noteFinalScrape(decision: FinalScrape): FinalScrape {
    this.finalScrape = decision;
    return decision;
  }

  /** The body of GET /state. */
  snapshot(): StateBody {
    return stateBody(this.core.context, this.cfg, {
      inFlight: this.inFlight,
      lastPollAt: this.poller.lastPollAt,
      lastPollError: this.poller.lastPollError,
      consecutiveFailures: this.poller.failures,
      proxy: this.envoy.profile(),
      waiters: this.answers.waiterCount,
      finalScrape: this.finalScrape,
    });
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
          if (this.stopped || !this.drainUnknown || this.core.state !== FAULT) return;
          this.drainUnknown = false;
          if (sent) this.core.fire('drain-found', "Envoy's listeners were already drained: finishing the sequence (FAULT until then)");
          else this.checkServing(', no drain reached it,');
        },
        (err: Error) => {
          this.core.setReason(`cannot tell whether Envoy was drained: ${err.message}`);
        },
      )
      .finally(() => {
        this.drainCheck = undefined;
      });
  }

  /**
   * Asks Envoy whether it serves the configuration it was sent (Envoy LIVE, in FAULT with no
   * sequence): it does, FAULT ends ('envoy-ok', to WARMING); not yet, FAULT's reason says what it
   * waits for, and the next LIVE poll asks again. Not asked while the table would refuse 'envoy-ok'
   * (a sequence has started): the answer could change nothing, and FAULT's reason stays its own.
   */
  private checkServing(known = ''): void {
    if (this.servingCheck || !this.core.check('envoy-ok').ok) return;
    this.servingCheck = this.envoy
      .configServed()
      .then(
        (waiting) => {
          if (this.stopped || this.core.state !== FAULT) return;
          if (waiting === null) this.core.fire('envoy-ok', `Envoy admin answers LIVE${known} and serves the configuration it was sent`);
          else this.core.setReason(waiting);
        },
        (err: Error) => {
          this.core.setReason(`cannot tell whether Envoy serves its configuration: ${err.message}`);
        },
      )
      .finally(() => {
        this.servingCheck = undefined;
      });
  }

  /**
   * A readiness probe was answered from `source`, a kubelet source (health-server.ts): in WARMING,
   * the first one answered 200 starts the start hold (startHold.afterReadiness).
   */
  readinessProbed(source: string): void {
    if (this.core.state !== WARMING || this.readinessSeenAt !== null) return;
    this.readinessSeenAt = this.clock.now();
    const hold = this.cfg.startHold;
    this.log('info', READINESS_SEEN, {
      source,
      lbAnswers200In: hold.afterReadiness ? `${hold.seconds}s (startHold.seconds)` : 'counted from WARMING (startHold.afterReadiness false)',
    });
    // The table's 'readiness-seen' changes nothing (WARMING to WARMING): no state file write, no
    // poll; only the start hold, when it counts from this probe, is armed.
    if (hold.afterReadiness) this.armTimers();
  }

  /** The LB-buffer, drain-timeout and start-hold timers, re-armed from the context (none once stopped). */
  private armTimers(): void {
    if (this.stopped) this.timers.disarm();
    else this.timers.arm(this.core.context, this.readinessSeenAt);
  }
}

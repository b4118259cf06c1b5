/**
 * The Envoy poll loop: one poll at a time, every pollIntervalSeconds (at once after a state change),
 * asking what the machine says to ask: /ready before the proxy drain, the in-flight count during it.
 * It also sends the drain calls, once, retrying on each poll until Envoy has answered 200. What a
 * result means (zero, LIVE again, FAULT) is the machine's to decide: the poller reports it.
 */
import type { PollMode } from './sequence-context';
import type { Clock, EnvoyPort, Logger, MachineCounters } from './types';

/** What the poller asks of the machine and tells it. */
export interface PollHost {
  mode(): PollMode;
  /** [3] is recorded and Envoy has not yet answered every drain call. */
  drainCallDue(): boolean;
  drainAcknowledged(at: number): void;
  counted(inFlight: number): void;
  live(): void;
  /** A failed poll; `failures` in a row so far, `detail` says what and how many. */
  failed(detail: string, failures: number): void;
}

export interface PollerOptions {
  readonly clock: Clock;
  readonly envoy: EnvoyPort;
  readonly log: Logger;
  readonly counters: Pick<MachineCounters, 'pollErrors' | 'drainCallErrors'>;
  readonly intervalMs: number;
  /** Consecutive failures at which the failure is logged again (the first is always logged). */
  readonly faultAfterFailures: number;
}

class EnvoyNotLive extends Error {}

export class EnvoyPoller {
  /** The last in-flight count read from Envoy (null before the first count). */
  inFlight: number | null = null;
  lastPollAt: number | null = null;
  lastPollError: string | null = null;
  /** Failed polls in a row. */
  failures = 0;

  private cancelPoll: (() => void) | undefined;
  private drainCall: Promise<void> | undefined;
  private lastDrainError = '';
  private polling = false;
  private pollSoon = false;
  private stopped = true;

  constructor(
    private readonly host: PollHost,
    private readonly o: PollerOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    this.cancelPoll?.();
    this.cancelPoll = undefined;
  }

  /** A state change may change what to poll: poll at once rather than one interval later. */
  pollNow(): void {
    if (this.stopped) return;
    if (this.polling) this.pollSoon = true;
    else this.schedule(0);
  }

  /** Sends the drain calls once; retried by the poll loop until acknowledged. */
  ensureDrainCall(): Promise<void> {
    if (!this.host.drainCallDue()) return Promise.resolve();
    this.drainCall ??= this.o.envoy
      .drainListeners()
      .then(
        () => {
          this.host.drainAcknowledged(this.o.clock.now());
          this.o.log('info', `Envoy drained: ${this.o.envoy.profile().drainCalls.join(', ')} answered 200`);
        },
        (err: Error) => {
          this.o.counters.drainCallErrors++;
          this.lastDrainError = err.message;
          this.o.log('warn', 'drain_listeners failed; retrying on the next poll', { error: err.message });
        },
      )
      .finally(() => {
        this.drainCall = undefined;
      });
    return this.drainCall;
  }

  private schedule(ms: number): void {
    this.cancelPoll?.();
    this.cancelPoll = this.o.clock.setTimer(ms, () => {
      this.cancelPoll = undefined;
      void this.pollOnce();
    });
  }

  private async pollOnce(): Promise<void> {
    if (this.stopped || this.polling) return;
    const mode = this.host.mode();
    if (mode === 'none') return;
    this.polling = true;
    try {
      if (mode === 'count') {
        await this.ensureDrainCall();
        if (this.host.drainCallDue()) throw new Error(`drain_listeners failed: ${this.lastDrainError}`);
        const n = await this.o.envoy.inFlight();
        this.succeeded();
        this.inFlight = n;
        this.host.counted(n);
      } else {
        const serverState = await this.o.envoy.serverState();
        if (serverState !== 'LIVE') throw new EnvoyNotLive(`Envoy /ready says ${serverState}`);
        this.succeeded();
        this.host.live();
      }
    } catch (err) {
      this.failed(err as Error);
    } finally {
      this.polling = false;
      if (!this.stopped) {
        const soon = this.pollSoon;
        this.pollSoon = false;
        this.schedule(soon ? 0 : this.o.intervalMs);
      }
    }
  }

  private succeeded(): void {
    this.failures = 0;
    this.lastPollAt = this.o.clock.now();
    this.lastPollError = null;
  }

  private failed(err: Error): void {
    this.failures++;
    this.o.counters.pollErrors++;
    this.lastPollAt = this.o.clock.now();
    this.lastPollError = err.message;
    if (this.failures === 1 || this.failures === this.o.faultAfterFailures)
      this.o.log('warn', 'Envoy admin poll failed', { error: err.message, failures: this.failures });
    this.host.failed(`${err.message} (${this.failures} consecutive failed polls)`, this.failures);
  }
}

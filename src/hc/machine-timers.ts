/**
 * The drain controller's timers: the LB buffer, the drain timeout, the start hold and the
 * termination witness's window. The first three are derived from the context on every arm(), so a
 * resumed sequence waits only what is left of each, never a fresh full wait.
 */
import type { HcConfig } from '../contract/hc-config';
import { bufferRunning, drainDeadlineRunning, startHoldFrom } from './sequence-context';
import type { Clock, PersistedState } from './types';

export type TimerConfig = Pick<HcConfig, 'lbBufferSeconds' | 'drainTimeoutSeconds' | 'startHold'>;

/** The events the timers fire into the table. */
export type TimerEvent = 'buffer-elapsed' | 'drain-timeout' | 'warmed';

export class SequenceTimers {
  private cancelBuffer: (() => void) | undefined;
  private cancelDeadline: (() => void) | undefined;
  private cancelStartHold: (() => void) | undefined;
  private cancelWitnessWindow: (() => void) | undefined;

  constructor(
    private readonly cfg: TimerConfig,
    private readonly clock: Clock,
    private readonly fire: (event: TimerEvent, reason: string) => void,
  ) {}

  /**
   * (Re)arms the LB-buffer, drain-timeout and start-hold timers from the context; `readinessSeenAt`:
   * when the kubelet's readiness probe was first answered 200 (null: not yet).
   */
  arm(p: PersistedState, readinessSeenAt: number | null): void {
    this.disarm();
    const now = this.clock.now();
    const holdFrom = startHoldFrom(p, this.cfg.startHold, readinessSeenAt);
    if (holdFrom !== null) {
      const hold = this.cfg.startHold;
      this.cancelStartHold = this.clock.setTimer(holdFrom + hold.seconds * 1000 - now, () => {
        this.cancelStartHold = undefined;
        this.fire('warmed', `start hold of ${hold.seconds}s elapsed${hold.afterReadiness ? " after the kubelet's readiness probe" : ''}`);
      });
    }
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

  /** Cancels the LB-buffer, drain-timeout and start-hold timers. */
  disarm(): void {
    this.cancelBuffer?.();
    this.cancelDeadline?.();
    this.cancelStartHold?.();
    this.cancelBuffer = this.cancelDeadline = this.cancelStartHold = undefined;
  }

  get witnessWindowOpen(): boolean {
    return this.cancelWitnessWindow !== undefined;
  }

  /** Opens the window a /drain waits in for the termination witness; `elapsed` runs at its end. */
  openWitnessWindow(seconds: number, elapsed: () => void): void {
    this.cancelWitnessWindow = this.clock.setTimer(seconds * 1000, () => {
      this.cancelWitnessWindow = undefined;
      elapsed();
    });
  }

  closeWitnessWindow(): void {
    this.cancelWitnessWindow?.();
    this.cancelWitnessWindow = undefined;
  }

  /** Every timer cancelled (the sidecar is stopping). */
  stop(): void {
    this.disarm();
    this.closeWitnessWindow();
  }
}

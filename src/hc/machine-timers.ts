/**
 * The drain controller's timers: the LB buffer, the drain timeout and the termination witness's
 * window. The first two are derived from the persisted context on every arm(), so a resumed
 * sequence waits only what is left of each, never a fresh full wait.
 */
import type { HcConfig } from '../contract/hc-config';
import { bufferRunning, drainDeadlineRunning } from './sequence-context';
import type { Clock, PersistedState } from './types';

export type TimerConfig = Pick<HcConfig, 'lbBufferSeconds' | 'drainTimeoutSeconds'>;

/** The events the timers fire into the table. */
export type TimerEvent = 'buffer-elapsed' | 'drain-timeout';

export class SequenceTimers {
  private cancelBuffer: (() => void) | undefined;
  private cancelDeadline: (() => void) | undefined;
  private cancelWitnessWindow: (() => void) | undefined;

  constructor(
    private readonly cfg: TimerConfig,
    private readonly clock: Clock,
    private readonly fire: (event: TimerEvent, reason: string) => void,
  ) {}

  /** (Re)arms the LB-buffer and drain-timeout timers from the context. */
  arm(p: PersistedState): void {
    this.disarm();
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

  /** Cancels the LB-buffer and drain-timeout timers. */
  disarm(): void {
    this.cancelBuffer?.();
    this.cancelDeadline?.();
    this.cancelBuffer = this.cancelDeadline = undefined;
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

/** The real clock for the running sidecar (tests inject a fake one). */
import { MAX_TIMER_MS } from '../core/duration';
import type { Clock } from './types';

/** Earlier than this, a callback is a wall-clock step (NTP), not timer rounding: it is not waited out. */
export const CLOCK_STEP_MS = 1_000;

type Timers = {
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (handle: unknown) => void;
};

/**
 * A clock whose timers never fire early by its own `now()`. Node runs timers on the event loop's
 * millisecond monotonic time, and that can be up to a millisecond behind `Date.now()`, so a 400 ms
 * timer can fire 399 ms later by the wall clock. The machine persists wall-clock timestamps and
 * promises orders such as "readiness fails one LB buffer after [1]", so an early callback is
 * re-armed for the rest. A callback early by CLOCK_STEP_MS or more means the wall clock stepped
 * back; that is not waited out (the sequence would stall by the size of the step).
 *
 * A wait longer than one Node timer holds (MAX_TIMER_MS; a longer delay fires after 1 ms) runs as a
 * chain of timers, counted on the monotonic timer clock; only the last one checks the wall clock.
 * The config bounds every duration below that, but the waiters' and the sequence's bounds are sums.
 */
export function wallClock(now: () => number = Date.now, timers: Timers = { setTimeout, clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) }): Clock {
  return {
    now,
    setTimer(ms, fn) {
      const due = now() + Math.max(0, ms);
      let handle: unknown;
      const arm = (wait: number): void => {
        const chunk = Math.min(wait, MAX_TIMER_MS);
        handle = timers.setTimeout(() => {
          if (wait > chunk) return arm(wait - chunk);
          const early = due - now();
          if (early > 0 && early < CLOCK_STEP_MS) arm(early);
          else fn();
        }, chunk);
      };
      arm(Math.max(0, ms));
      return () => timers.clearTimeout(handle);
    },
  };
}

export const systemClock: Clock = wallClock();

/** The real clock for the running sidecar (tests inject a fake one). */
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
 */
export function wallClock(now: () => number = Date.now, timers: Timers = { setTimeout, clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) }): Clock {
  return {
    now,
    setTimer(ms, fn) {
      const due = now() + Math.max(0, ms);
      let handle: unknown;
      const arm = (wait: number): void => {
        handle = timers.setTimeout(() => {
          const early = due - now();
          if (early > 0 && early < CLOCK_STEP_MS) arm(early);
          else fn();
        }, wait);
      };
      arm(Math.max(0, ms));
      return () => timers.clearTimeout(handle);
    },
  };
}

export const systemClock: Clock = wallClock();

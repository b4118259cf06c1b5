/** The real clock for the running sidecar (tests inject a fake one). */
import type { Clock } from './types';

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const handle = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(handle);
  },
};

/**
 * Warnings a stranger can cause (a refused witness caller, a displaced waiter) are logged at most
 * once per `everyMs` for each message; the ones left out are counted and their number goes with
 * the next line written. 14 connections pipelining /wait-closed wrote 28,000 lines (5 MB) in 8 s
 * when every one was logged.
 */
import type { Clock, Logger } from './types';

/** One line per message per 10 s: a kubectl logs reader sees it, a flood fills no disk. */
export const LOG_EVERY_MS = 10_000;

export function rateLimitedLogger(log: Logger, clock: Pick<Clock, 'now'>, everyMs = LOG_EVERY_MS): Logger {
  const last = new Map<string, { at: number; suppressed: number }>();
  return (level, msg, fields) => {
    const now = clock.now();
    const seen = last.get(msg);
    if (seen && now - seen.at < everyMs) {
      seen.suppressed++;
      return;
    }
    last.set(msg, { at: now, suppressed: 0 });
    log(level, msg, seen && seen.suppressed > 0 ? { ...fields, suppressedSinceLast: seen.suppressed } : fields);
  };
}

/**
 * Durations in the spec and on the command line: a plain number is seconds; a string carries
 * its unit (`500ms`, `2s`, `1.5m`, `1h`). Everything inside gracegate works in seconds.
 */
import { GracegateError } from './errors';

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };
const DURATION_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$/;

export class DurationError extends GracegateError {}

/** Parses a duration to seconds; throws DurationError with the offending text. */
export function parseDurationSeconds(input: number | string): number {
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0) throw new DurationError(`duration must be a non-negative number of seconds, got ${input}`);
    return input;
  }
  const match = DURATION_PATTERN.exec(input);
  if (!match) throw new DurationError(`'${input}' is not a duration (use seconds, or a number with ms, s, m or h, e.g. '500ms', '2s')`);
  // Round to the millisecond so '0.1s' * 3 does not print as 0.30000000000000004.
  return Math.round(Number(match[1]) * UNIT_SECONDS[match[2]!]! * 1000) / 1000;
}

/** Formats seconds for people: `500ms`, `2s`, `1.5s`. */
export function formatSeconds(seconds: number): string {
  if (seconds > 0 && seconds < 1) return `${Math.round(seconds * 1000)}ms`;
  return `${Math.round(seconds * 1000) / 1000}s`;
}

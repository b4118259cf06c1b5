/**
 * Durations in the spec and on the command line: a plain number is seconds; a string carries
 * its unit (`500ms`, `2s`, `1.5m`, `1h`). Everything inside gracegate works in seconds.
 */
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };
const DURATION_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$/;

export class DurationError extends Error {}

/**
 * The longest single timer Node.js runs: setTimeout takes a signed 32-bit millisecond delay and
 * turns anything longer into 1 ms (with only a TimeoutOverflowWarning; nodejs.org/api/timers.html,
 * "setTimeout": "When delay is larger than 2147483647 or less than 1 ... the delay will be set to 1").
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The longest duration gracegate accepts anywhere (spec, sidecar config, flags): 2147483 s, about
 * 24.8 days, so every wait the sidecar runs fits one Node timer. Kubernetes takes far more as a grace
 * period (an int64 of seconds that the kubelet turns into a Go time.Duration of int64 nanoseconds,
 * i.e. up to about 292 years: kubernetes pkg/kubelet/kuberuntime/kuberuntime_container.go), so
 * this is the binding bound.
 */
export const MAX_DURATION_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

function bounded(seconds: number, text: string | number): number {
  if (seconds > MAX_DURATION_SECONDS) {
    throw new DurationError(`duration ${text} is longer than ${MAX_DURATION_SECONDS}s (about 24.8 days), the longest wait gracegate can time (a Node.js timer holds at most 2^31-1 ms)`);
  }
  return seconds;
}

/** Parses a duration to seconds; throws DurationError with the offending text. */
export function parseDurationSeconds(input: number | string): number {
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0) throw new DurationError(`duration must be a non-negative number of seconds, got ${input}`);
    return bounded(input, input);
  }
  const match = DURATION_PATTERN.exec(input);
  if (!match) throw new DurationError(`'${input}' is not a duration (use seconds, or a number with ms, s, m or h, e.g. '500ms', '2s')`);
  // Round to the millisecond so '0.1s' * 3 does not print as 0.30000000000000004.
  return bounded(Math.round(Number(match[1]) * UNIT_SECONDS[match[2]!]! * 1000) / 1000, `'${input.trim()}'`);
}

/** Formats seconds for people: `500ms`, `2s`, `1.5s`. */
export function formatSeconds(seconds: number): string {
  if (seconds > 0 && seconds < 1) return `${Math.round(seconds * 1000)}ms`;
  return `${Math.round(seconds * 1000) / 1000}s`;
}

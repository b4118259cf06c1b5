/**
 * Durations, in one place. In: the spec and the command line take a plain number as seconds, or
 * a string with its unit (`500ms`, `2s`, `1.5m`, `1h`). Inside: gracegate works in seconds,
 * rounded to the millisecond. Out: `Duration` writes a value the way each consumer reads it.
 */
import { GracegateError } from './errors';

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };
const DURATION_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$/;

export class DurationError extends GracegateError {}

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
    throw new DurationError(
      `duration ${text} is longer than ${MAX_DURATION_SECONDS}s (about 24.8 days), the longest wait gracegate can time (a Node.js timer holds at most 2^31-1 ms)`,
    );
  }
  return seconds;
}

/** Parses a duration to seconds (at most MAX_DURATION_SECONDS); throws DurationError with the offending text. */
export function parseDurationSeconds(input: number | string): number {
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0) throw new DurationError(`duration must be a non-negative number of seconds, got ${input}`);
    return bounded(input, input);
  }
  const match = DURATION_PATTERN.exec(input);
  if (!match) throw new DurationError(`'${input}' is not a duration (use seconds, or a number with ms, s, m or h, e.g. '500ms', '2s')`);
  return bounded(roundSeconds(Number(match[1]) * UNIT_SECONDS[match[2]!]!), `'${input.trim()}'`);
}

/** Seconds rounded to the millisecond, so sums of fractional intervals print cleanly (not 0.30000000000000004). */
export function roundSeconds(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

/** A number of seconds, and the forms the places gracegate writes to want it in. */
export class Duration {
  /** Whole milliseconds: the resolution of every duration gracegate reads or computes. */
  readonly ms: number;

  private constructor(seconds: number) {
    this.ms = Math.round(seconds * 1000);
  }

  static seconds(seconds: number): Duration {
    return new Duration(seconds);
  }

  get seconds(): number {
    return this.ms / 1000;
  }

  get isWholeSeconds(): boolean {
    return this.ms % 1000 === 0;
  }

  /** Whole seconds, rounded up, for fields that take whole seconds: a wait is never shortened. */
  get wholeSecondsUp(): number {
    return Math.ceil(this.ms / 1000);
  }

  /** `2s`, `0.5s`: the protobuf Duration JSON form that Envoy and Istio read. */
  toString(): string {
    return `${this.seconds}s`;
  }

  /** `2s` or `500ms`: a whole number with its unit, for configs that take integers only (HAProxy). */
  inWholeUnits(): string {
    return this.isWholeSeconds ? `${this.seconds}s` : `${this.ms}ms`;
  }

  /** For people: `500ms` below a second, else seconds (`2s`, `1.5s`). */
  forPeople(): string {
    return this.ms > 0 && this.ms < 1000 ? `${this.ms}ms` : `${this.seconds}s`;
  }
}

/** Formats seconds for people: `500ms`, `2s`, `1.5s`. */
export function formatSeconds(seconds: number): string {
  return Duration.seconds(seconds).forPeople();
}

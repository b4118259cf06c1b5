/**
 * `--duration-dist`: how long each request takes, in a small grammar (docs/simulate.md):
 *   fixed:1.8s                      every request 1.8 s
 *   uniform:100ms..2s               evenly spread between the two
 *   lognormal:p50=80ms,p99=2s       log-normal through the two percentiles
 *   0.95*fixed:100ms+0.05*fixed:20s a weighted mix (weights sum to 1)
 * Durations take ms, s or m. Every sample is capped at MAX_REQUEST_MS, so a run stays bounded.
 */
import { DurationError, parseDurationSeconds } from '../core/duration';
import { GracegateError } from '../core/errors';

/** The longest request the model follows (10 min): a log-normal's tail is cut there. */
export const MAX_REQUEST_MS = 600_000;

/** z of the 99th percentile of the standard normal: ln(p99 / p50) = 2.326 sigma. */
const Z99 = 2.3263;

export type DurationShape =
  | { kind: 'fixed'; ms: number }
  | { kind: 'uniform'; minMs: number; maxMs: number }
  | { kind: 'lognormal'; p50Ms: number; p99Ms: number };

export type DurationDist = { text: string; parts: Array<{ weight: number; shape: DurationShape }> };

const problem = (message: string): GracegateError => new GracegateError([{ path: '--duration-dist', message }]);

function ms(text: string, where: string): number {
  try {
    const s = parseDurationSeconds(text.trim());
    if (s * 1000 > MAX_REQUEST_MS) throw problem(`${where}: '${text}' is longer than ${MAX_REQUEST_MS / 60_000} min, the longest request the model follows`);
    if (s <= 0) throw problem(`${where}: '${text}' must be more than 0`);
    return Math.round(s * 1000);
  } catch (err) {
    if (err instanceof DurationError) throw problem(`${where}: '${text}' is not a duration (e.g. 80ms, 2s)`);
    throw err;
  }
}

function shapeOf(text: string): DurationShape {
  const [kind, arg = ''] = text.split(/:(.*)/s, 2).map((x) => x.trim());
  switch (kind) {
    case 'fixed':
      return { kind: 'fixed', ms: ms(arg, 'fixed') };
    case 'uniform': {
      const m = /^(.+)\.\.(.+)$/.exec(arg);
      if (!m) throw problem(`uniform needs MIN..MAX, e.g. uniform:100ms..2s, got '${text}'`);
      const [minMs, maxMs] = [ms(m[1]!, 'uniform'), ms(m[2]!, 'uniform')];
      if (minMs > maxMs) throw problem(`uniform: the minimum ${m[1]!.trim()} is above the maximum ${m[2]!.trim()}`);
      return { kind: 'uniform', minMs, maxMs };
    }
    case 'lognormal': {
      const m = /^p50=(.+),\s*p99=(.+)$/.exec(arg);
      if (!m) throw problem(`lognormal needs p50=D,p99=D, e.g. lognormal:p50=80ms,p99=2s, got '${text}'`);
      const [p50Ms, p99Ms] = [ms(m[1]!, 'lognormal p50'), ms(m[2]!, 'lognormal p99')];
      if (p99Ms <= p50Ms) throw problem(`lognormal: p99 (${m[2]!.trim()}) must be above p50 (${m[1]!.trim()})`);
      return { kind: 'lognormal', p50Ms, p99Ms };
    }
    default:
      throw problem(`'${text}' is not fixed:D, uniform:D..D or lognormal:p50=D,p99=D`);
  }
}

/** Parses the grammar above; a GracegateError on `--duration-dist` names what is wrong. */
export function parseDurationDist(text: string): DurationDist {
  const terms = text.split('+').map((t) => t.trim());
  if (text.trim() === '' || terms.some((t) => t === '')) throw problem(`'${text}' is empty or has an empty term`);
  const parts = terms.map((term) => {
    const m = /^(\d+(?:\.\d+)?)\s*\*\s*(.+)$/.exec(term);
    if (!m) {
      if (terms.length > 1) throw problem(`in a mix every term needs a weight, e.g. 0.95*fixed:100ms, got '${term}'`);
      return { weight: 1, shape: shapeOf(term) };
    }
    const weight = Number(m[1]);
    if (weight <= 0) throw problem(`the weight of '${term}' must be more than 0`);
    return { weight, shape: shapeOf(m[2]!) };
  });
  const sum = parts.reduce((s, p) => s + p.weight, 0);
  if (Math.abs(sum - 1) > 1e-9) throw problem(`the weights sum to ${Number(sum.toFixed(6))}, not 1`);
  return { text: text.trim(), parts };
}

/** A standard normal from two uniforms (Box-Muller). */
function normal(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

function sampleShape(s: DurationShape, rand: () => number): number {
  switch (s.kind) {
    case 'fixed':
      return s.ms;
    case 'uniform':
      return s.minMs + (s.maxMs - s.minMs) * rand();
    case 'lognormal':
      return s.p50Ms * Math.exp((Math.log(s.p99Ms / s.p50Ms) / Z99) * normal(rand));
  }
}

/** One request's length in ms, at most MAX_REQUEST_MS. */
export function sampleDuration(d: DurationDist, rand: () => number): number {
  let pick = rand();
  const part = d.parts.find((p) => (pick -= p.weight) < 0) ?? d.parts[d.parts.length - 1]!;
  return Math.min(MAX_REQUEST_MS, Math.max(0, sampleShape(part.shape, rand)));
}

/** The longest a request of this distribution runs, for how far back a run starts its traffic (p99.9 for a log-normal). */
export function longestMs(d: DurationDist): number {
  const high = (s: DurationShape): number =>
    s.kind === 'fixed' ? s.ms : s.kind === 'uniform' ? s.maxMs : s.p50Ms * Math.exp((Math.log(s.p99Ms / s.p50Ms) / Z99) * 3.09);
  return Math.min(MAX_REQUEST_MS, Math.max(...d.parts.map((p) => high(p.shape))));
}

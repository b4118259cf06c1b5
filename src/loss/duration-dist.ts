/**
 * `--duration-dist`: how long each request takes, in a small grammar (docs/simulate.md):
 *   fixed:1.8s                      every request 1.8 s
 *   uniform:100ms..2s               evenly spread between the two
 *   lognormal:p50=80ms,p99=2s       log-normal through the two percentiles
 *   lognormal:p50=80ms,p99=2s,max=3s the same, none longer than max (the tail beyond it drawn again)
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
  | { kind: 'lognormal'; p50Ms: number; p99Ms: number; maxMs?: number };

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
      const m = /^p50=([^,]+),\s*p99=([^,]+)(?:,\s*max=([^,]+))?$/.exec(arg);
      if (!m) throw problem(`lognormal needs p50=D,p99=D[,max=D], e.g. lognormal:p50=80ms,p99=2s, got '${text}'`);
      const [p50Ms, p99Ms] = [ms(m[1]!, 'lognormal p50'), ms(m[2]!, 'lognormal p99')];
      if (p99Ms <= p50Ms) throw problem(`lognormal: p99 (${m[2]!.trim()}) must be above p50 (${m[1]!.trim()})`);
      if (m[3] === undefined) return { kind: 'lognormal', p50Ms, p99Ms };
      const maxMs = ms(m[3], 'lognormal max');
      if (maxMs < p99Ms) throw problem(`lognormal: max (${m[3].trim()}) must be at least p99 (${m[2]!.trim()})`);
      return { kind: 'lognormal', p50Ms, p99Ms, maxMs };
    }
    default:
      throw problem(`'${text}' is not fixed:D, uniform:D..D or lognormal:p50=D,p99=D[,max=D]`);
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
    case 'lognormal': {
      const draw = () => s.p50Ms * Math.exp((Math.log(s.p99Ms / s.p50Ms) / Z99) * normal(rand));
      let d = draw();
      // Truncated at max: a draw beyond it is drawn again (at most 1 % of draws are, since max >= p99).
      for (let i = 0; s.maxMs !== undefined && d > s.maxMs && i < 1000; i++) d = draw();
      return s.maxMs !== undefined ? Math.min(d, s.maxMs) : d;
    }
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
    s.kind === 'fixed'
      ? s.ms
      : s.kind === 'uniform'
        ? s.maxMs
        : Math.min(s.maxMs ?? Number.POSITIVE_INFINITY, s.p50Ms * Math.exp((Math.log(s.p99Ms / s.p50Ms) / Z99) * 3.09));
  return Math.min(MAX_REQUEST_MS, Math.max(...d.parts.map((p) => high(p.shape))));
}

/** The standard normal's CDF (Abramowitz and Stegun 7.1.26 for erf, error below 1.5e-7). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

/** A log-normal's parameters from its two percentiles. */
function lognormal(s: { p50Ms: number; p99Ms: number }): { mu: number; sigma: number } {
  return { mu: Math.log(s.p50Ms), sigma: Math.log(s.p99Ms / s.p50Ms) / Z99 };
}

/** E[(D - x)^+] of one shape, uncapped. */
function shapeExcess(s: DurationShape, x: number): number {
  switch (s.kind) {
    case 'fixed':
      return Math.max(0, s.ms - x);
    case 'uniform': {
      if (s.maxMs === s.minMs) return Math.max(0, s.minMs - x);
      if (x <= s.minMs) return (s.minMs + s.maxMs) / 2 - x;
      if (x >= s.maxMs) return 0;
      return (s.maxMs - x) ** 2 / (2 * (s.maxMs - s.minMs));
    }
    case 'lognormal':
      return lognormalExcess(s)(x);
  }
}

/** E[(D - x)^+] of a log-normal shape as a function of x, its constants computed once. */
function lognormalExcess(s: Extract<DurationShape, { kind: 'lognormal' }>): (x: number) => number {
  const { mu, sigma } = lognormal(s);
  const mean = Math.exp(mu + (sigma * sigma) / 2);
  const plain = (at: number): number => {
    if (at <= 0) return mean - at;
    const d1 = (mu + sigma * sigma - Math.log(at)) / sigma;
    return mean * normalCdf(d1) - at * normalCdf(d1 - sigma);
  };
  const M = s.maxMs;
  if (M === undefined) return plain;
  // Truncated at M (D | D <= M): E[(D - x)^+ ; D <= M] / P(D <= M), and E[(D - x)^+ ; D <= M] is
  // E[(D - x)^+] - E[(D - M)^+] - (M - x) P(D > M) for x <= M.
  const plainM = plain(M);
  const above = 1 - normalCdf((Math.log(M) - mu) / sigma);
  return (x) => (x >= M ? 0 : (plain(x) - plainM - (M - x) * above) / (1 - above));
}

/**
 * E[(D - x)^+] in ms for a length D as sampleDuration draws it (capped at MAX_REQUEST_MS): the
 * expected part of a request still to run `x` ms after it began; for x < 0, mean - x. The loss
 * model's closed form (src/loss/expected.ts) counts requests with it: λ x excessMs(d, x) is how many
 * Poisson arrivals before a given instant are still running `x` ms after it.
 */
export function excessMs(d: DurationDist, x: number): number {
  return excessFunction(d)(x);
}

const compiled = new WeakMap<DurationDist, (x: number) => number>();

/**
 * excessMs as a function of x for one distribution, its constants computed once (the closed form
 * calls it thousands of times per plan; `gracegate plan` has a CPU budget, bench/startup-bench.ts).
 */
export function excessFunction(d: DurationDist): (x: number) => number {
  const known = compiled.get(d);
  if (known) return known;
  const parts = d.parts.map(({ weight, shape }) => {
    const excess = shape.kind === 'lognormal' ? lognormalExcess(shape) : (x: number) => shapeExcess(shape, x);
    // The draws are capped at MAX_REQUEST_MS: E[(min(D, cap) - x)^+] = E[(D - x)^+] - E[(D - cap)^+].
    const atCap = excess(MAX_REQUEST_MS);
    return { weight, at: (x: number) => excess(x) - atCap };
  });
  const f = (x: number): number => {
    if (x >= MAX_REQUEST_MS) return 0;
    let sum = 0;
    for (const p of parts) sum += p.weight * p.at(x);
    return sum;
  };
  compiled.set(d, f);
  return f;
}

/** The mean length in ms (as sampleDuration draws it). */
export function meanMs(d: DurationDist): number {
  return excessMs(d, 0);
}

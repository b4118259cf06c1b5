/**
 * Request durations in constant memory, for quantiles over logs of any size. Envoy logs
 * `%DURATION%` in whole milliseconds, so durations up to EXACT_MS are counted exactly, one slot per
 * millisecond; longer ones (rare: minutes-long streams) fall into buckets 1 % wide, and a quantile
 * that lands there is the bucket's upper bound (rounded up, never down: the drain timeout follows
 * from it), up to MAX_DURATION_MS, the longest duration measured (longer lines are invalid, never
 * added). About 0.6 MB whatever the input size.
 */
import { MAX_DURATION_MS } from './access-log';

/** 65.535 s: every request of a normal gateway is counted to the millisecond. */
export const EXACT_MS = 65_536;
const RATIO = 1.01;
/** Enough buckets 1 % wide to reach MAX_DURATION_MS (1886): no duration measured falls beyond the last. */
const LOG_BUCKETS = Math.ceil(Math.log(MAX_DURATION_MS / EXACT_MS) / Math.log(RATIO));

export class DurationHistogram {
  private readonly exact = new Float64Array(EXACT_MS);
  private readonly coarse = new Float64Array(LOG_BUCKETS + 1);
  private total = 0;
  private max = -1;

  add(ms: number): void {
    if (!(ms >= 0)) return;
    this.total++;
    if (ms > this.max) this.max = ms;
    if (ms < EXACT_MS) this.exact[Math.floor(ms)]!++;
    else this.coarse[Math.min(LOG_BUCKETS, Math.floor(Math.log(ms / EXACT_MS) / Math.log(RATIO)))]!++;
  }

  get count(): number {
    return this.total;
  }

  /** The largest duration seen, ms; -1 when empty. */
  get maxMs(): number {
    return this.max;
  }

  /**
   * The q-quantile (0 < q <= 1) in ms, by the nearest-rank method (the smallest value with at least
   * q of the samples at or below it); null when empty.
   */
  quantileMs(q: number): number | null {
    if (this.total === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.total));
    let seen = 0;
    for (let ms = 0; ms < EXACT_MS; ms++) {
      seen += this.exact[ms]!;
      if (seen >= rank) return ms;
    }
    for (let b = 0; b <= LOG_BUCKETS; b++) {
      seen += this.coarse[b]!;
      if (seen >= rank) return Math.min(this.max, Math.ceil(EXACT_MS * RATIO ** (b + 1)));
    }
    return this.max;
  }
}

/**
 * A small histogram for per-route figures: buckets 2 % wide from 1 ms up to MAX_DURATION_MS, so
 * hundreds of routes stay cheap. Quantiles are bucket upper bounds, capped at the route's longest request.
 */
export class CompactHistogram {
  private static readonly STEP = Math.log(1.02);
  /** Bucket 0 below 1 ms, then enough to reach MAX_DURATION_MS (1510 buckets, about 12 KB). */
  private static readonly SIZE = 2 + Math.ceil(Math.log(MAX_DURATION_MS) / CompactHistogram.STEP);
  private readonly buckets = new Float64Array(CompactHistogram.SIZE);
  private total = 0;
  private max = -1;

  add(ms: number): void {
    if (!(ms >= 0)) return;
    this.total++;
    if (ms > this.max) this.max = ms;
    const b = ms < 1 ? 0 : Math.min(CompactHistogram.SIZE - 1, 1 + Math.floor(Math.log(ms) / CompactHistogram.STEP));
    this.buckets[b]!++;
  }

  get count(): number {
    return this.total;
  }

  get maxMs(): number {
    return this.max;
  }

  /** Requests longer than `ms`: every bucket above it, and the share of its own bucket above it (spread evenly within the bucket's 2 %). */
  countAboveMs(ms: number): number {
    let n = 0;
    for (let b = 1; b < CompactHistogram.SIZE; b++) {
      const lo = Math.exp((b - 1) * CompactHistogram.STEP);
      const hi = Math.min(Math.exp(b * CompactHistogram.STEP), Math.max(lo, this.max));
      if (lo > ms) n += this.buckets[b]!;
      else if (hi > ms) n += (this.buckets[b]! * (hi - ms)) / (hi - lo);
    }
    return n;
  }

  quantileMs(q: number): number | null {
    if (this.total === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.total));
    let seen = 0;
    for (let b = 0; b < CompactHistogram.SIZE; b++) {
      seen += this.buckets[b]!;
      if (seen >= rank) return b === 0 ? Math.min(this.max, 1) : Math.min(this.max, Math.ceil(Math.exp(b * CompactHistogram.STEP)));
    }
    return this.max;
  }
}

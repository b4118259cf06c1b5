/** Nearest-rank q-quantile (the smallest value with at least q of the values at or below it), as measure computes it. */
export function nearestRank(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

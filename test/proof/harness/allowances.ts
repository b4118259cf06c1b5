/**
 * How many of each explained race an e2e run may show, from the rates the report script measured
 * (repeated runs, written to docs/e2e/results.json), not from round numbers.
 *
 * Model: a race hits each pod termination independently, so the count over n terminations is
 * Poisson. The rate used is the one-sided 95 % upper confidence bound of the measured rate (exact
 * Poisson bound: x races seen in N terminations), and the allowance is the smallest count k that n
 * terminations exceed with probability at most 0.1 % at that rate. A test therefore fails by chance
 * in at most about 1 run in 1,000 when nothing changed, and a regression that makes a race happen
 * in every termination fails whenever n exceeds the allowance (the rolling test, 3 terminations).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/repo';

export const RATE_CONFIDENCE = 0.95;
export const FALSE_FAILURE_PROBABILITY = 0.001;

export type RaceKind = 'cutAtDown' | 'keepAliveRace';

/** What the repeated runs measured for one proxy: races seen over terminations. */
export type MeasuredRaces = { terminations: number; runs: number } & Record<RaceKind, { total: number; runsWith: number; maxPerRun: number }>;

/** P(X <= k) for X ~ Poisson(mu). */
export function poissonCdf(k: number, mu: number): number {
  let term = Math.exp(-mu);
  let sum = term;
  for (let i = 1; i <= k; i++) {
    term *= mu / i;
    sum += term;
  }
  return Math.min(1, sum);
}

/** The exact one-sided upper confidence bound of a Poisson mean from `x` events: P(X <= x | mu) = 1 - confidence. */
export function poissonUpperBound(x: number, confidence: number): number {
  let lo = 0;
  let hi = x + 10 + 10 * Math.sqrt(x + 1);
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (poissonCdf(x, mid) > 1 - confidence) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** The smallest k with P(X > k) <= p for X ~ Poisson(mu). */
export function poissonQuantile(mu: number, p: number): number {
  let k = 0;
  while (1 - poissonCdf(k, mu) > p) k++;
  return k;
}

/** The allowance for `terminations` pod terminations, from x races measured over N terminations. */
export function allowanceFor(measured: { total: number }, measuredTerminations: number, terminations: number): number {
  const rate = poissonUpperBound(measured.total, RATE_CONFIDENCE) / measuredTerminations;
  return poissonQuantile(rate * terminations, FALSE_FAILURE_PROBABILITY);
}

export const RESULTS_FILE = join(REPO_ROOT, 'docs', 'e2e', 'results.json');

type RaceSets = { races: Record<string, MeasuredRaces>; racesWithRetry: Record<string, MeasuredRaces> };

/**
 * The counts an allowance is computed from, pooled where the race does not depend on what differs:
 * both races happen at the LB hop, and each pinned Envoy announces and closes connections the same
 * way (docs/envoy.md), so the repeats on every pinned Envoy count together; the connect cut at DOWN
 * is HAProxy's flush meeting a connect under way, which retry-on does not touch, so the repeats with
 * retry-on count for it too; the keep-alive race is what retry-on takes away, so only the repeats
 * without it count for that one.
 */
export function pooledRaces(results: RaceSets, kind: RaceKind): { total: number; terminations: number } {
  const sets = kind === 'cutAtDown' ? [...Object.values(results.races), ...Object.values(results.racesWithRetry)] : Object.values(results.races);
  return { total: sets.reduce((n, s) => n + s[kind].total, 0), terminations: sets.reduce((n, s) => n + s.terminations, 0) };
}

export function readRaceSets(file = RESULTS_FILE): RaceSets {
  const results = JSON.parse(readFileSync(file, 'utf8')) as Partial<RaceSets>;
  return { races: results.races ?? {}, racesWithRetry: results.racesWithRetry ?? {} };
}

/** The allowance of one race for a run of `terminations`; throws when nothing was measured. */
export function raceAllowance(kind: RaceKind, terminations: number, results: RaceSets = readRaceSets()): number {
  const pooled = pooledRaces(results, kind);
  if (pooled.terminations === 0) throw new Error(`no measured race rates in ${RESULTS_FILE}: run the report script (docs/e2e/RESULTS.md says how)`);
  return allowanceFor(pooled, pooled.terminations, terminations);
}

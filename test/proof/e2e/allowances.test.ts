import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allowanceFor, poissonCdf, poissonQuantile, poissonUpperBound, pooledRaces, raceAllowance, type MeasuredRaces } from '../harness/allowances';

// The race allowances (harness/allowances.ts) against numbers worked out by hand / from tables.

test('Poisson CDF and the exact upper confidence bound of a count', () => {
  assert.ok(Math.abs(poissonCdf(0, 1) - Math.exp(-1)) < 1e-12);
  assert.ok(Math.abs(poissonCdf(2, 2) - 5 * Math.exp(-2)) < 1e-12, 'e^-2 (1 + 2 + 2)');
  // 0 events: the 95 % bound solves e^-mu = 0.05, mu = ln 20 = 2.996 (the "rule of three").
  assert.ok(Math.abs(poissonUpperBound(0, 0.95) - Math.log(20)) < 1e-6);
  // 4 events: 9.154 (Poisson confidence-limit tables, one-sided 95 %).
  assert.ok(Math.abs(poissonUpperBound(4, 0.95) - 9.1535) < 1e-3);
});

test('the allowance is the count exceeded with probability at most 0.1 % at the upper-bound rate', () => {
  assert.equal(poissonQuantile(0.0318, 0.001), 1, 'P(X > 0) = 3.1 %, P(X > 1) = 0.05 %');
  // 4 races in 288 terminations: rate bound 9.154 / 288 = 0.0318 per termination.
  assert.equal(allowanceFor({ total: 4 }, 288, 1), 1, 'one termination: P(X > 1) = 0.049 %');
  assert.equal(allowanceFor({ total: 4 }, 288, 3), 2, 'three terminations, mu 0.095: P(X > 1) = 0.43 %, P(X > 2) = 0.013 %');
  assert.equal(allowanceFor({ total: 0 }, 100, 1), 1, 'none in 100: rate bound 0.030, P(X > 0) = 2.9 %');
  assert.equal(allowanceFor({ total: 0 }, 10_000, 1), 0, 'none in 10,000: rate bound 0.0003, P(X > 0) = 0.03 %');
});

test('the counts are pooled: cuts over every repeat set, keep-alive races over the sets without retry-on', () => {
  const set = (cut: number, race: number): MeasuredRaces => ({
    runs: 30,
    terminations: 30,
    cutAtDown: { total: cut, runsWith: cut, maxPerRun: cut },
    keepAliveRace: { total: race, runsWith: race, maxPerRun: race },
  });
  const results = { races: { 'Envoy A': set(0, 0), 'Envoy B': set(0, 0) }, racesWithRetry: { 'Envoy A': set(1, 0), 'Envoy B': set(0, 7) } };
  assert.deepEqual(pooledRaces(results, 'cutAtDown'), { total: 1, terminations: 120 });
  assert.deepEqual(pooledRaces(results, 'keepAliveRace'), { total: 0, terminations: 60 }, 'races with retry-on are not evidence about races without it');
  // 1 in 120: bound 4.744 / 120 = 0.040 per termination; 0 in 60: bound 2.996 / 60 = 0.050.
  assert.equal(raceAllowance('cutAtDown', 1, results), 1, 'P(X > 1) = 0.08 %');
  assert.equal(raceAllowance('cutAtDown', 3, results), 2, 'mu 0.119: P(X > 2) = 0.03 %');
  assert.equal(raceAllowance('keepAliveRace', 1, results), 2, 'P(X > 1) = 0.12 %, just above 0.1 %');
  assert.throws(() => raceAllowance('cutAtDown', 1, { races: {}, racesWithRetry: {} }), /no measured race rates/);
});

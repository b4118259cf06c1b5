import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyedRandom } from '../../src/core/keyed-random';
import { parseDurationDist, sampleDuration } from '../../src/loss/duration-dist';
import { simulateRun, type LbInputs, type RunInputs } from '../../src/loss/model';
import { simulateOrder } from '../../src/simulate/simulate';
import { lbInputsOf } from './lb-inputs';

// The model's mechanics on cases small enough to check by hand: each cause of loss appears under
// the setting that produces it and goes away under the setting that removes it.

const LB: LbInputs = lbInputsOf();
const POD = { drainTimeoutMs: 3000, lbBufferMs: 1000, pollIntervalMs: 100, terminationDrainDurationMs: 500 };

/** One request of `ms` on the leaving pod, started at `atMs`, and no other traffic. */
function single(order: RunInputs['order'], lb: Partial<LbInputs>, atMs: number, ms: number, pod: Partial<typeof POD> = {}): RunInputs {
  return {
    pods: 2,
    lb: { ...LB, ...lb },
    pod: { ...POD, ...pod },
    order,
    traffic: { kind: 'workers', workers: 0 },
    durations: parseDurationDist('fixed:1s'),
    singles: [{ atMs, ms }],
    warmupMs: 0,
    idleAtClose: 1,
  };
}

/** Steady Poisson traffic, `runs` runs: the mean of each fate. */
function steady(order: RunInputs['order'], lb: Partial<LbInputs>, dist = 'uniform:50ms..2s', rps = 40, idleAtClose = 2) {
  const inputs: RunInputs = {
    pods: 2,
    lb: { ...LB, ...lb },
    pod: POD,
    order,
    traffic: { kind: 'poisson', rps },
    durations: parseDurationDist(dist),
    warmupMs: 3000,
    idleAtClose,
  };
  return simulateOrder(inputs, 40, 7).byFate;
}

test('drain-first, by hand: [4] at the first poll after the last request ends, DOWN within one probe period and the fall after, exit one LB buffer and terminationDrainDuration after [4]', () => {
  const r = simulateRun(single('drain-first', {}, -500, 2800), keyedRandom(1));
  assert.equal(r.at.drain, 0);
  // Sent at -500, connected 1 ms later, done at 2301: the poll at 2300 still sees it, the one at 2400 does not.
  assert.equal(r.at.zero, 2400);
  assert.ok(r.at.down! > 2400 + 300 && r.at.down! <= 2400 + 300 + 300, `DOWN at ${r.at.down}`);
  assert.equal(r.at.exit, 2400 + 1000 + 500);
  assert.equal(r.lost, 0);
  const timedOut = simulateRun(single('drain-first', {}, -500, 5000), keyedRandom(1));
  assert.equal(timedOut.at.zero, 3000, 'the drain timeout bounds the wait');
  assert.equal(timedOut.fates.cutAtExit, 1, 'and the request still running at the exit is cut');
});

test('cut at exit: the naive proxy leaves after terminationDrainDuration under a long request; health-first waits for it', () => {
  assert.equal(simulateRun(single('naive-503', {}, -500, 2800), keyedRandom(2)).fates.cutAtExit, 1);
  assert.equal(simulateRun(single('health-first', {}, -500, 2800), keyedRandom(2)).lost, 0);
});

test('cut at DOWN: a flushing LB cuts what is in flight at DOWN; one that keeps sessions does not', () => {
  const flush = simulateRun(single('naive-503', { flushOnDown: true }, -500, 2800, { terminationDrainDurationMs: 2000 }), keyedRandom(3));
  assert.equal(flush.fates.cutAtDown, 1);
  assert.ok(flush.at.down! <= 600);
  assert.equal(steady('article-order', { flushOnDown: true }).cutAtDown > 1, true, 'the article order fails health with requests in flight');
  assert.equal(steady('article-order', { flushOnDown: false }).cutAtDown, 0);
  assert.equal(
    steady('drain-first', { flushOnDown: true, redispatch: true }).cutAtDown < 0.2,
    true,
    'drain-first fails health at zero: only connects under way at DOWN',
  );
});

test('refused: drain-first refuses connects until DOWN; lost without redispatch, re-sent with it', () => {
  const without = steady('drain-first', { flushOnDown: true });
  assert.ok(without.refused > 5, `refused ${without.refused}`);
  const withIt = steady('drain-first', { flushOnDown: true, redispatch: true });
  assert.equal(withIt.refused, 0);
  assert.ok(withIt.redispatched > 5);
  assert.equal(steady('health-first', {}).refused, 0, 'health-first drains after the LB stopped sending');
});

test("an LB that keeps sending after DOWN (NLB's propagation) sends requests to a pod that is gone", () => {
  const late = steady('naive-503', { propagationMs: 2000 });
  const prompt = steady('naive-503', { propagationMs: 0 });
  assert.ok(late.refused > prompt.refused + 20, `${late.refused} refused with 2 s of propagation, ${prompt.refused} without`);
});

test("a refused request holds its closed-loop client for the LB's retries", () => {
  const inputs = (retryDelayMs: number): RunInputs => ({
    pods: 2,
    lb: { ...LB, flushOnDown: true, refusedHoldMs: 3 * retryDelayMs },
    pod: POD,
    order: 'drain-first',
    traffic: { kind: 'workers', workers: 12 },
    durations: parseDurationDist('uniform:50ms..2s'),
    warmupMs: 3000,
    idleAtClose: 6,
  });
  const slow = simulateOrder(inputs(1000), 40, 3).byFate.refused;
  const fast = simulateOrder(inputs(0), 40, 3).byFate.refused;
  assert.ok(slow < fast, `a client waiting 3 s per refused request sends fewer of them (${slow} < ${fast})`);
  assert.ok(slow <= 12, 'at most one each within the window');
});

test('keep-alive race: a connect in the listen backlog at the listener close gets no answer; retry-on empty-response re-sends it', () => {
  const race = steady('drain-first', { redispatch: true, connectMs: 50 }, 'uniform:50ms..2s', 200);
  assert.ok(race.keepAliveRace > 1, `race ${race.keepAliveRace}`);
  const retried = steady('drain-first', { redispatch: true, connectMs: 50, retryOnEmptyResponse: true }, 'uniform:50ms..2s', 200);
  assert.equal(retried.keepAliveRace, 0);
  assert.equal(
    steady('health-first', { connectMs: 50 }, 'uniform:50ms..2s', 200).keepAliveRace,
    0,
    'no request arrives at a listener close after the LB stopped sending',
  );
});

test('soft signal: the LB stops sending at the first probe that sees it; an LB without it reads the soft answer as a failure', () => {
  const soft = steady('soft-drain', { softSignal: true, flushOnDown: true });
  assert.equal(soft.cutAtDown + soft.refused + soft.cutAtExit, 0);
  const notUnderstood = steady('soft-drain', { softSignal: false, flushOnDown: true });
  assert.ok(notUnderstood.cutAtDown > 1, 'DOWN comes with requests in flight and flushes them');
});

test('connection reuse: after the drain each idle connection carries one more request instead of a refused connect', () => {
  // Idle connections enough for every request until DOWN: none is refused, and in-flight never reaches
  // zero before the drain timeout, so the flush at DOWN finds requests to cut.
  const pooled = steady('drain-first', { flushOnDown: true, reusesConnections: true }, 'fixed:100ms', 40, 1000);
  const fresh = steady('drain-first', { flushOnDown: true, reusesConnections: false }, 'fixed:100ms', 40, 1000);
  assert.equal(pooled.refused, 0);
  assert.ok(fresh.refused > 5, `${fresh.refused} refused without reuse`);
  assert.ok(pooled.cutAtDown > fresh.cutAtDown, `${pooled.cutAtDown} cut at DOWN with reuse, ${fresh.cutAtDown} without`);
});

test('the same key gives the same numbers', () => {
  assert.deepEqual(steady('article-order', { flushOnDown: true }), steady('article-order', { flushOnDown: true }));
});

test('--duration-dist: the grammar, its samples and its errors', () => {
  const rand = keyedRandom(5);
  assert.equal(sampleDuration(parseDurationDist('fixed:1.8s'), rand), 1800);
  const u = Array.from({ length: 2000 }, () => sampleDuration(parseDurationDist('uniform:100ms..2s'), rand));
  assert.ok(Math.min(...u) >= 100 && Math.max(...u) <= 2000);
  const ln = Array.from({ length: 4000 }, () => sampleDuration(parseDurationDist('lognormal:p50=80ms,p99=2s'), rand)).sort((a, b) => a - b);
  assert.ok(Math.abs(ln[2000]! - 80) < 10, `p50 ${ln[2000]}`);
  assert.ok(ln[3960]! > 1200 && ln[3960]! < 3300, `p99 ${ln[3960]}`);
  const mix = Array.from({ length: 4000 }, () => sampleDuration(parseDurationDist('0.95*fixed:100ms+0.05*fixed:20s'), rand));
  assert.ok(Math.abs(mix.filter((x) => x === 20_000).length / 4000 - 0.05) < 0.015);
  for (const [bad, says] of [
    ['fixed', /not a duration/],
    ['uniform:2s..1s', /above the maximum/],
    ['lognormal:p50=2s,p99=1s', /must be above p50/],
    ['0.5*fixed:1s+0.4*fixed:2s', /sum to 0.9/],
    ['fixed:1s+fixed:2s', /needs a weight/],
    ['gamma:1s', /is not fixed/],
    ['fixed:11m', /longer than 10 min/],
    ['', /empty/],
  ] as const) {
    assert.throws(
      () => parseDurationDist(bad),
      (err: Error) => says.test(err.message) && /--duration-dist/.test(err.message),
      bad,
    );
  }
});

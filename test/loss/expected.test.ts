import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDurationDist, excessMs } from '../../src/loss/duration-dist';
import { expectedCapped, expectedLoss, type ExpectedInputs } from '../../src/loss/expected';
import { FATES, idleConnectionsAtClose, type LbInputs, type RunInputs } from '../../src/loss/model';
import { SEQUENCES } from '../../src/contract/hc';
import { simulateRuns, warmupMs } from '../../src/simulate/simulate';
import { lbInputsOf } from './lb-inputs';

// The closed form against the simulation it stands for: the same inputs, every sequence, LBs that
// flush or keep sessions, re-send refused connections or not, reuse connections or not, with and
// without a soft signal and NLB's propagation, over request lengths short and long. The closed form
// must lie within the simulation's own spread of its mean (four standard errors), plus 5 % of it and
// a floor of 0.1 requests for the one approximation it makes (src/loss/expected.ts says which).

const BASE: LbInputs = lbInputsOf({ probeIntervalMs: 2000, downAfterFirstFailMs: 2000 });
const POD = { drainTimeoutMs: 6000, lbBufferMs: 10_000, pollIntervalMs: 1000, terminationDrainDurationMs: 5000 };

const LBS: Record<string, Partial<LbInputs>> = {
  'keeps sessions': {},
  flushes: { flushOnDown: true },
  'flushes, re-sends refused': { flushOnDown: true, redispatch: true },
  'flushes, reuses connections': { flushOnDown: true, reusesConnections: true },
  'soft signal, flushes': { softSignal: true, flushOnDown: true },
  'propagation, flushes': { flushOnDown: true, propagationMs: 4000, probeIntervalMs: 1000, downAfterFirstFailMs: 1000 },
  'slow connects, re-sends': { flushOnDown: true, redispatch: true, connectMs: 40 },
};
const DISTS = ['lognormal:p50=80ms,p99=2s', 'uniform:100ms..8s', '0.9*fixed:200ms+0.1*fixed:7s'];

function mc(inputs: RunInputs, runs: number): { mean: number; se: number } {
  const losses = simulateRuns(inputs, runs, 11).map((o) => o.lost);
  const m = losses.reduce((a, b) => a + b, 0) / runs;
  const variance = losses.reduce((s, x) => s + (x - m) ** 2, 0) / Math.max(1, runs - 1);
  return { mean: m, se: Math.sqrt(variance / runs) };
}

test('excess(x) = E[(D - x)^+]: the closed forms against a direct sum', () => {
  for (const text of [...DISTS, 'fixed:1.5s', 'lognormal:p50=3s,p99=9m']) {
    const d = parseDurationDist(text);
    // E[(D - x)^+] = integral from x of P(D > t) dt: the derivative of excess is -P(D > x), and excess(0) the mean.
    for (const x of [0, 50, 500, 3000, 20_000]) {
      const h = 1;
      const slope = (excessMs(d, x + h) - excessMs(d, x)) / h;
      assert.ok(slope <= 1e-9 && slope >= -1 - 1e-9, `${text}: the slope at ${x} is -P(D > x), got ${slope}`);
    }
    assert.ok(Math.abs(excessMs(d, -100) - (excessMs(d, 0) + 100)) < 1e-6, `${text}: below 0 the excess grows one for one`);
  }
  assert.equal(excessMs(parseDurationDist('fixed:1s'), 400), 600);
  assert.ok(Math.abs(excessMs(parseDurationDist('uniform:1ms..2001ms'), 1001) - 250) < 1e-9);
});

test('E[min(N, cap)] for Poisson N', () => {
  assert.equal(expectedCapped(3, 0), 0);
  assert.ok(Math.abs(expectedCapped(3, 1) - (1 - Math.exp(-3))) < 1e-9);
  assert.ok(Math.abs(expectedCapped(2000, 10) - 10) < 1e-9, 'a small pool is always used up');
  assert.ok(Math.abs(expectedCapped(5, 10_000) - 5) < 1e-6, 'a large pool carries every arrival');
});

test('the closed form is the simulation: every sequence, LB behaviour and request length', () => {
  const misses: string[] = [];
  let compared = 0;
  for (const [name, lb] of Object.entries(LBS))
    for (const text of DISTS)
      for (const order of SEQUENCES) {
        const durations = parseDurationDist(text);
        const rps = 60;
        const traffic = { kind: 'poisson' as const, rps };
        const idleAtClose = idleConnectionsAtClose(traffic, durations, 2, lb.connectMs ?? 1);
        const run: RunInputs = {
          pods: 2,
          lb: { ...BASE, ...lb },
          pod: POD,
          order,
          traffic,
          durations,
          warmupMs: warmupMs(durations),
          idleAtClose,
        };
        const closed: ExpectedInputs = { pods: 2, lb: run.lb, pod: POD, order, rps, durations, idleAtClose };
        const e = expectedLoss(closed);
        const s = mc(run, 300);
        compared++;
        const tolerance = 4 * s.se + 0.05 * s.mean + 0.1;
        if (Math.abs(e.lost - s.mean) > tolerance)
          misses.push(
            `${order} behind '${name}', ${text}: closed form ${e.lost.toFixed(3)} (${FATES.map((f) => `${f} ${e.byFate[f].toFixed(2)}`).join(', ')}), simulated ${s.mean.toFixed(3)} ± ${s.se.toFixed(3)}`,
          );
      }
  assert.deepEqual(misses, [], `${misses.length} of ${compared} outside the tolerance`);
});

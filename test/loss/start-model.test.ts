import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyedRandom } from '../../src/core/keyed-random';
import { simulateArrival, type StartInputs } from '../../src/loss/start-model';
import { simulateStarts } from '../../src/simulate/simulate';

// The start half's mechanics (src/loss/start-model.ts): where the LB's probe passes through the
// traffic's own rules the window is 0 by construction; by a path of its own, a hold of the whole rule
// path closes it; without the hold, an LB that resends a failed connect loses nothing in it, and
// one that does not loses what outlasts its hold on a connect.

/** The test cluster's contrast: HAProxy inter 300 ms and rise 1, kube-proxy at its defaults, no start hold. */
const UNHELD: StartInputs = {
  path: 'own-path',
  holdMs: 0,
  minSyncMs: 1000,
  propagationMs: 1000,
  probeIntervalMs: 300,
  recoverMs: 300,
  redispatch: false,
  connectHoldMs: 0,
  pods: 3,
  traffic: { kind: 'poisson', rps: 300 },
  meanRequestMs: 100,
  connectMs: 1,
};

const RUNS = 400;

test("through the traffic's own rules, or to the pod's IP, the LB cannot take a node in before its rule: no window", () => {
  for (const path of ['traffic-rules', 'pod-ip'] as const) {
    const r = simulateStarts({ ...UNHELD, path }, RUNS, 3);
    assert.equal(r.windowMs.max, 0, path);
    assert.equal(r.lost.max, 0, path);
  }
});

test('by a path of its own with no hold, most new pods have a window, and an LB that does not resend loses what it sent into it', () => {
  const r = simulateStarts(UNHELD, RUNS, 3);
  const early = Array.from({ length: RUNS }, (_, i) => simulateArrival(UNHELD, keyedRandom(7 * 100_003 + i)).windowMs > 0).filter(Boolean).length;
  // The rule comes at U(0, 1 s) + U(0, 1 s), the UP at U(0, 300 ms): P(rule later) = 1 - 0.3^2 / 6 = 0.985.
  assert.ok(early / RUNS > 0.95, `${early} of ${RUNS} early`);
  assert.ok(r.sent > 0);
  // connectHoldMs 0: every request sent into the window is lost.
  assert.equal(r.lost.mean, r.sent);
});

test('the start hold of minSyncPeriod + propagation closes the window whatever the probe phase', () => {
  const r = simulateStarts({ ...UNHELD, holdMs: UNHELD.minSyncMs + UNHELD.propagationMs }, RUNS, 3);
  assert.equal(r.windowMs.max, 0);
  assert.equal(r.lost.max, 0);
});

test('an LB that resends a failed connect loses nothing in the window; one that holds it loses only what outlasts the hold', () => {
  const resent = simulateStarts({ ...UNHELD, redispatch: true }, RUNS, 3);
  assert.ok(resent.sent > 0);
  assert.equal(resent.lost.max, 0);
  const unheld = simulateStarts(UNHELD, RUNS, 3);
  const held = simulateStarts({ ...UNHELD, connectHoldMs: 1000 }, RUNS, 3);
  const longer = simulateStarts({ ...UNHELD, connectHoldMs: 5000 }, RUNS, 3);
  // The same random key: the same windows and the same requests, only their fates differ.
  assert.equal(held.sent, unheld.sent);
  assert.ok(held.lost.mean < unheld.lost.mean && held.lost.mean > 0, `${held.lost.mean} against ${unheld.lost.mean}`);
  assert.equal(longer.lost.max, 0);
});

test('the same key gives the same starts', () => {
  assert.deepEqual(simulateStarts(UNHELD, 50, 9), simulateStarts(UNHELD, 50, 9));
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SEQUENCES } from '../../../src/contract/hc';
import { describeRun, runSequenceProblems } from '../harness/expect';
import { planOrderOf } from '../harness/orders-results';
import { istioProxy } from '../harness/proxies';
import { runScenario } from '../harness/scenario';
import { ORDER_FAMILIES, ORDER_RUNS } from '../harness/scenarios';

// Issue 48: behind each LB family (flush on DOWN with refused connections lost, sessions kept,
// refused connections re-sent, a graceful signal), every order gracegate can run, on real HAProxy
// and real Envoy pods under S5's load; the order the plan runs there loses the least in the real runs
// too. One run each here (docs/e2e/orders-results.json repeats them beside the model's prediction).
for (const family of ORDER_FAMILIES) {
  test(`every order behind ${family.family}: the plan's loses the least`, { timeout: 240_000 }, async (t) => {
    const lost = new Map<string, number>();
    for (const { order, cfg } of ORDER_RUNS.filter((r) => r.family === family)) {
      const run = await runScenario(cfg, istioProxy());
      assert.ok(run.result.requests > 50, `enough traffic: ${run.result.requests}`);
      assert.equal(run.plan.sequence, order, 'spec.sequence ran the order asked for');
      assert.deepEqual(runSequenceProblems(run), [], describeRun(run));
      lost.set(order, run.result.failureTotal);
      t.diagnostic(`${order}: ${run.result.requests} requests, ${run.result.failureTotal} failed`);
    }
    const planOrder = planOrderOf(family);
    assert.ok(SEQUENCES.includes(planOrder));
    const mine = lost.get(planOrder)!;
    for (const [order, n] of lost) assert.ok(mine <= n, `the plan runs ${planOrder} (${mine} lost), but ${order} lost ${n}: ${JSON.stringify([...lost])}`);
  });
}

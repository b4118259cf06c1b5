import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRun, lossProblems, runSequenceProblems } from '../harness/expect';
import { pinnedProxies, proxyLabel } from '../harness/proxies';
import { LB_SETTINGS, runScenario } from '../harness/scenario';
import { SCALE } from '../harness/scenarios';

// Issue 12: an autoscaled gateway keeps its HPA. A scale-down is a pod termination like any other,
// and one HPA decision can take several pods out together: here 3 -> 1 with Kubernetes' default
// behaviour, both surplus pods deleted at the same instant and draining side by side, then a
// scale-up to 2. Every sequence must run in full, and the loss must be only what the plan predicts:
// none behind health-first and soft-drain; behind drain-first, the races and refused connects its
// findings name (a refused connect re-sent to the other leaving pod), within the measured allowances.
// Three runs of ~12 s (suite time): health-first and drain-first on Istio's Envoy, soft-drain on the
// newest pinned Envoy (every setting on both Envoys measured 5/5 green, 62 s).
const ON_NEWEST = LB_SETTINGS.zeroExcuse;
for (const proxy of pinnedProxies()) {
  for (const cfg of SCALE.filter((c) => (proxy.role === 'newest') === (c.setting === ON_NEWEST))) {
    test(`scale-down 3 -> 1 and scale-up to 2 under load, ${cfg.setting.label}, ${proxyLabel(proxy)}`, { timeout: 120_000 }, async () => {
      const run = await runScenario(cfg, proxy);
      const r = run.result;
      assert.equal(run.plan.scaling.mode, 'autoscaled');
      assert.equal(run.terminations.length, 2, 'one HPA decision took both surplus pods out');
      assert.equal(r.proofs.length, 2);
      const starts = run.terminations.map((t) => t.startMs);
      assert.ok(Math.max(...starts) - Math.min(...starts) < 100, `deleted together: ${starts.join(', ')}`);
      assert.ok(r.requests > 100, `enough traffic: ${r.requests}`);
      assert.deepEqual(runSequenceProblems(run), [], describeRun(run));
      const leaveTogether = run.plan.sequence === 'drain-first' ? 'autoscale-drain-first-overlap' : 'autoscale-pods-leave-together';
      assert.ok(
        run.plan.findings.some((f) => f.id === leaveTogether),
        `the plan says the two pods leave together (${leaveTogether})`,
      );
      if (run.plan.sequence !== 'drain-first') {
        // The plan predicts no loss at all here: every request must succeed.
        assert.ok(!run.plan.findings.some((f) => f.expectedLoss !== undefined && f.expectedLoss !== 'none'), 'no finding predicts a loss');
        assert.equal(r.failureTotal, 0, describeRun(run));
      }
      assert.deepEqual(lossProblems(run), [], describeRun(run));
      assert.ok(Number(r.extra?.servedAfterScaleUp) > 0, `the scale-up pod took traffic: ${JSON.stringify(r.extra)}`);
    });
  }
}

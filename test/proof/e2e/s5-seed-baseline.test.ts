import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRun } from '../harness/expect';
import { runScenario } from '../harness/scenario';
import { istioProxy, proxyLabel } from '../harness/proxies';
import { S5_SEED } from '../harness/scenarios';

// S5 baseline (issue 5): the seed's literal order, scripted by the harness: drain while still
// accepting (drain_listeners?graceful&skip_exit), poll in-flight up to the drain timeout, then 503.
// Under steady load in-flight never reaches 0 while the LB still sends (docs/facts.md §2), so behind an
// LB that flushes on DOWN the flush finds live sessions and resets them. A baseline tests no
// sidecar, so it runs on the Istio release's Envoy only.
const proxy = istioProxy();
for (const cfg of S5_SEED) {
  test(`S5 article order behind ${cfg.setting.label}, ${proxyLabel(proxy)}`, { timeout: 90_000 }, async () => {
    const run = await runScenario(cfg, proxy);
    const r = run.result;
    const [term] = run.terminations;
    assert.ok(
      term!.detail.some((d) => d.startsWith('in-flight never reached 0')),
      `the drain that keeps accepting never converged\n${describeRun(run)}`,
    );
    if (run.plan.loadBalancer.cutsSessionsOnDown) {
      assert.ok(r.failureTotal > 0, `the flush at DOWN cut live sessions\n${describeRun(run)}`);
      assert.ok(
        Object.keys(r.failures).every((k) => k === 'ECONNRESET' || k === 'truncated'),
        `losses are resets\n${describeRun(run)}`,
      );
    }
  });
}

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRun, runSequenceProblems } from '../harness/expect';
import { pinnedProxies, proxyLabel } from '../harness/proxies';
import { runScenario } from '../harness/scenario';
import { ENVOY_LB } from '../harness/scenarios';

// The `envoy` LB model (issue 9): a real Envoy in front of the pods instead of HAProxy, probing each
// sidecar with lb-config's active health check (interval 300 ms; a 503 ejects at once) and keeping
// connections on ejection. The plan picks health-first, predicts no loss, and none is excused.
for (const proxy of pinnedProxies()) {
  test(`S5 gracegate health-first behind a front Envoy (active health check), ${proxyLabel(proxy)}`, { timeout: 90_000 }, async () => {
    const run = await runScenario(ENVOY_LB, proxy);
    assert.equal(run.plan.sequence, 'health-first');
    assert.deepEqual(
      run.plan.findings.filter((f) => f.expectedLoss !== undefined),
      [],
      'the plan predicts no loss',
    );
    assert.ok(run.result.requests > 50, `enough traffic: ${run.result.requests}`);
    assert.deepEqual(runSequenceProblems(run), [], describeRun(run));
    assert.equal(run.result.failureTotal, 0, `health-first behind an in-mesh Envoy loses nothing\n${describeRun(run)}`);
  });
}

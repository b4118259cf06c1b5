import { test } from 'node:test';
import assert from 'node:assert/strict';
import { haproxyAvailable, describeRun } from './harness/expect';
import { runScenario } from './harness/scenario';
import { S5_GRACEGATE } from './harness/scenarios';

// S5 (issue 5): steady load with mixed request lengths, one pod leaves, gracegate runs the sequence
// its planner chose for each LB behaviour. Zero loss wherever FACTS.md §2 says zero is reachable;
// where the planner reported a finding, the measured loss is the kind the finding predicted.
for (const cfg of S5_GRACEGATE) {
  test(`S5 gracegate behind ${cfg.setting.label}`, { skip: haproxyAvailable() ? false : 'haproxy not installed', timeout: 90_000 }, async () => {
    const run = await runScenario(cfg);
    const r = run.result;
    assert.ok(r.requests > 50, `enough traffic: ${r.requests}`);
    const finding = run.plan.findings.find((f) => f.expectedLoss !== undefined && f.expectedLoss !== 'none');
    if (finding === undefined) {
      assert.equal(r.failureTotal, 0, `zero client failures\n${describeRun(run)}`);
      if (r.chunks) assert.equal(r.chunks.received, r.chunks.expected, 'every streamed chunk arrived');
      return;
    }
    // drain-first without redispatch: the finding says refused connections. HAProxy retries a
    // refused connect on the same server, then answers 503: every loss is an HTTP 503 and HAProxy
    // counted connection errors; no session was reset.
    assert.equal(finding.id, 'drain-first-without-redispatch');
    assert.equal(finding.expectedLoss, 'refused-connections');
    assert.ok(r.failureTotal > 0, `the predicted loss happened\n${describeRun(run)}`);
    assert.deepEqual(Object.keys(r.failures), ['http-503'], `refused connections surface as HTTP 503, nothing else\n${describeRun(run)}`);
    assert.ok(r.haproxy.econ > 0, `HAProxy counted the refused connects\n${describeRun(run)}`);
  });
}

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRun } from './harness/expect';
import { runScenario } from './harness/scenario';
import { S5_GRACEGATE } from './harness/scenarios';

// S5 (issue 5): steady load with mixed request lengths, one pod leaves, gracegate runs the sequence
// its planner chose for each LB behaviour. Zero loss wherever FACTS.md §2 says zero is reachable;
// where the planner reported a finding, the measured loss is the kind the finding predicted.
for (const cfg of S5_GRACEGATE) {
  test(`S5 gracegate behind ${cfg.setting.label}`, { timeout: 90_000 }, async () => {
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
    // refused connect on the same server, then answers 503, so the loss is HTTP 503s matched by
    // HAProxy's connection errors. Measured besides (about 1 run in 8): one request sent on a
    // keep-alive connection the draining pod closed at that instant, which the client sees as a
    // closed connection. No session is reset by the flush: in-flight was 0 before the 503.
    assert.equal(finding.id, 'drain-first-without-redispatch');
    assert.equal(finding.expectedLoss, 'refused-connections');
    const http503 = r.failures['http-503'] ?? 0;
    assert.ok(http503 > 0, `the predicted loss happened\n${describeRun(run)}`);
    assert.ok(http503 >= r.failureTotal - 1, `refused connections surface as HTTP 503 (at most one keep-alive race besides)\n${describeRun(run)}`);
    assert.ok(Object.keys(r.failures).every((k) => k === 'http-503' || k === 'ECONNRESET'), `nothing but 503s and a closed connection\n${describeRun(run)}`);
    assert.ok(r.haproxy.econ >= http503, `HAProxy counted a connection error for every 503\n${describeRun(run)}`);
    assert.equal(r.events.find((e) => e.id === 6)!.atMs, null, 'the flush at DOWN found no session');
  });
}

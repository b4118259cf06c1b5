import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyFailures, describeRun, MAX_CUTS_PER_DOWN, MAX_KEEPALIVE_RACES_PER_TERMINATION, truncatedStreamsBesides } from './harness/expect';
import { runScenario } from './harness/scenario';
import { S5_GRACEGATE } from './harness/scenarios';

// S5 (issue 5): steady load with mixed request lengths, one pod leaves, gracegate runs the sequence
// its planner chose for each LB behaviour. Zero loss wherever FACTS.md §2 says zero is reachable;
// where the planner reported a finding, the measured loss is the kind the finding predicted.
// Two races are sorted out first, each bounded and explained in harness/expect.ts (both found by
// CI, about one run in ten and one in forty): drain-first's connect cut at DOWN, and HTTP/1's
// keep-alive race on a connection the draining pod closed after a pre-drain response.
for (const cfg of S5_GRACEGATE) {
  test(`S5 gracegate behind ${cfg.setting.label}`, { timeout: 90_000 }, async () => {
    const run = await runScenario(cfg);
    const r = run.result;
    assert.ok(r.requests > 50, `enough traffic: ${r.requests}`);
    const predicts = (id: string) => run.plan.findings.some((f) => f.id === id);

    const { cutAtDown, keepAliveRace, other } = classifyFailures(run);
    if (!predicts('drain-first-cuts-connects-at-down')) assert.equal(cutAtDown.length, 0, `no connect cut without drain-first\n${describeRun(run)}`);
    assert.ok(cutAtDown.length <= MAX_CUTS_PER_DOWN, `the connect race cuts a request or two, not more: ${cutAtDown.length}\n${describeRun(run)}`);
    if (!predicts('keepalive-race-not-retried')) assert.equal(keepAliveRace.length, 0, `no keep-alive race where the plan does not predict one\n${describeRun(run)}`);
    assert.ok(keepAliveRace.length <= MAX_KEEPALIVE_RACES_PER_TERMINATION, `at most one keep-alive race: ${keepAliveRace.length}\n${describeRun(run)}`);
    if (run.plan.loadBalancer.cutsSessionsOnDown) {
      // Every session the flush found was a connect under way: cut (with redispatch), or, while
      // HAProxy was still retrying the refused connect, answered 503 later (termination state DC--).
      const flushed = run.downs.find((d) => d.server === 'gw-1')?.sessionsActive ?? 0;
      const http503 = other.filter((x) => x.outcome === 'http-503').length;
      assert.ok(flushed <= cutAtDown.length + http503, `the flush at DOWN found only connects under way (${flushed} sessions, ${cutAtDown.length} cut, ${http503} HTTP 503)\n${describeRun(run)}`);
    }

    if (!predicts('drain-first-without-redispatch')) {
      assert.equal(other.length, 0, `zero client failures besides the two races\n${describeRun(run)}`);
      assert.deepEqual(truncatedStreamsBesides(run, [...cutAtDown, ...keepAliveRace]), [], 'every streamed chunk arrived');
      return;
    }
    // drain-first without redispatch: the finding says refused connections. HAProxy retries a
    // refused connect on the same server, then answers 503, so the loss is HTTP 503s matched by
    // HAProxy's connection errors.
    assert.equal(run.plan.findings.find((f) => f.id === 'drain-first-without-redispatch')!.expectedLoss, 'refused-connections');
    assert.ok(other.length > 0, `the predicted loss happened\n${describeRun(run)}`);
    assert.ok(other.every((x) => x.outcome === 'http-503'), `refused connections surface as HTTP 503, nothing else\n${describeRun(run)}`);
    assert.ok(r.haproxy.econ >= other.length, `HAProxy counted a connection error for every 503\n${describeRun(run)}`);
  });
}

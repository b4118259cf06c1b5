import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyFailures, describeRun, MAX_CUTS_PER_DOWN, MAX_KEEPALIVE_RACES_PER_TERMINATION, truncatedStreamsBesides } from './harness/expect';
import { runScenario } from './harness/scenario';
import { ROLLING } from './harness/scenarios';

// Rolling replacement (issue 5): all three pods replaced one after another under load, as
// maxUnavailable 1 / maxSurge 0 and minReadySeconds do it, with zero loss besides the two bounded
// races of harness/expect.ts (drain-first's connect cut at DOWN, HTTP/1's keep-alive race).
test('rolling replacement of every pod under load loses nothing but the two bounded races', { timeout: 120_000 }, async () => {
  const run = await runScenario(ROLLING);
  const r = run.result;
  assert.equal(run.terminations.length, 3);
  assert.ok(r.requests > 100, `enough traffic: ${r.requests}`);
  assert.ok(run.plan.findings.some((f) => f.id === 'drain-first-cuts-connects-at-down'), 'the plan predicts drain-first-cuts-connects-at-down');
  // lb-config writes option http-server-close for drain-first: no connection to a pod is reused, so no keep-alive race is predicted (or allowed).
  assert.ok(!run.plan.findings.some((f) => f.id === 'keepalive-race-not-retried'));
  const { cutAtDown, keepAliveRace, other } = classifyFailures(run);
  assert.equal(other.length, 0, `zero client failures besides the two races\n${describeRun(run)}`);
  assert.ok(cutAtDown.length <= MAX_CUTS_PER_DOWN * run.downs.length, `a request or two per DOWN at most: ${cutAtDown.length} over ${run.downs.length} DOWNs\n${describeRun(run)}`);
  assert.ok(keepAliveRace.length <= MAX_KEEPALIVE_RACES_PER_TERMINATION * run.terminations.length, `at most one keep-alive race per termination: ${keepAliveRace.length}\n${describeRun(run)}`);
  assert.deepEqual(truncatedStreamsBesides(run, [...cutAtDown, ...keepAliveRace]), [], 'every streamed chunk arrived');
  // The rollout time against fixed preStop sleeps is reported (docs/e2e/RESULTS.md), not asserted:
  // it is a timing, and timings belong in reports, not in tests that flake on a loaded machine.
});

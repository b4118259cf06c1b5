import { test } from 'node:test';
import assert from 'node:assert/strict';
import { haproxyAvailable, describeRun } from './harness/expect';
import { runScenario } from './harness/scenario';
import { ROLLING } from './harness/scenarios';

// Rolling replacement (issue 5): all three pods replaced one after another under load, as
// maxUnavailable 1 / maxSurge 0 does it, with zero loss, and faster than fixed preStop sleeps.
test('rolling replacement of every pod under load loses nothing', { skip: haproxyAvailable() ? false : 'haproxy not installed', timeout: 120_000 }, async () => {
  const run = await runScenario(ROLLING);
  const r = run.result;
  assert.equal(run.terminations.length, 3);
  assert.ok(r.requests > 100, `enough traffic: ${r.requests}`);
  assert.equal(r.failureTotal, 0, `zero client failures\n${describeRun(run)}`);
  if (r.chunks) assert.equal(r.chunks.received, r.chunks.expected);
  const extra = r.extra!;
  assert.ok(Number(extra['rolloutMs']) < Number(extra['preStopSleepSumMs']), `rollout ${extra['rolloutMs']} ms vs fixed sleeps ${extra['preStopSleepSumMs']} ms`);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRun } from './harness/expect';
import { runScenario } from './harness/scenario';
import { S1 } from './harness/scenarios';

// S1 (issue 5): one long request in flight while its pod leaves. Naive fails it; every gracegate
// sequence, each behind the LB behaviour its planner chose it for, completes it.
for (const cfg of S1) {
  test(`S1 ${cfg.termination === 'gracegate' ? 'gracegate' : cfg.termination} behind ${cfg.setting.label}`, { timeout: 60_000 }, async () => {
    const run = await runScenario(cfg);
    const [rec] = run.records;
    assert.equal(run.records.length, 1);
    if (cfg.termination === 'naive') {
      assert.notEqual(rec!.outcome, 'ok', `naive termination should cut the long request\n${describeRun(run)}`);
    } else {
      assert.equal(rec!.outcome, 'ok', describeRun(run));
      assert.ok(rec!.endMs - rec!.startMs >= 1800, 'the request ran its full length');
    }
  });
}

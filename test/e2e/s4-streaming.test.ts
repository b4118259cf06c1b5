import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRun } from './harness/expect';
import { runScenario } from './harness/scenario';
import { S4 } from './harness/scenarios';

// S4 (issue 5): a streamed response (12 chunks over 1.8 s) while its pod leaves. Naive cuts it
// partway; gracegate lets it finish, because it ends within the drain timeout (3 s).
for (const cfg of S4) {
  test(`S4 ${cfg.termination} behind ${cfg.setting.label}`, { timeout: 60_000 }, async () => {
    const run = await runScenario(cfg);
    const [rec] = run.records;
    const chunks = rec!.chunks!;
    if (cfg.termination === 'naive') {
      assert.notEqual(rec!.outcome, 'ok', describeRun(run));
      assert.ok(chunks.received < chunks.expected, `cut partway: ${chunks.received}/${chunks.expected}\n${describeRun(run)}`);
    } else {
      assert.equal(rec!.outcome, 'ok', describeRun(run));
      assert.deepEqual(chunks, { received: 12, expected: 12 });
      assert.ok(rec!.endMs - rec!.startMs < run.plan.timings.drainTimeoutSeconds * 1000, 'the stream ends within the drain timeout');
    }
  });
}

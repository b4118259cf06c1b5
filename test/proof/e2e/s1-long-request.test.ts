import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRun, lossProblems, runSequenceProblems } from '../harness/expect';
import { istioProxy, pinnedProxies, proxyLabel } from '../harness/proxies';
import { runScenario } from '../harness/scenario';
import { S1 } from '../harness/scenarios';

// S1 (issue 5): one long request in flight while its pod leaves, beside a light steady load, on
// each pinned Envoy. Naive cuts it; every gracegate sequence, each behind the LB behaviour its
// planner chose it for, runs its whole sequence (harness/expect.ts sequenceProblems) and completes it.
// The naive baseline tests no sidecar: it runs on the Istio release's Envoy only.
for (const proxy of pinnedProxies()) {
  for (const cfg of S1.filter((c) => c.termination !== 'naive' || proxyLabel(proxy) === proxyLabel(istioProxy()))) {
    test(`S1 ${cfg.termination} behind ${cfg.setting.label}, ${proxyLabel(proxy)}`, { timeout: 60_000 }, async () => {
      const run = await runScenario(cfg, proxy);
      const long = run.records.find((r) => r.label === 'long request')!;
      const t0 = run.terminations[0]!.startMs;
      if (cfg.termination === 'naive') {
        assert.notEqual(long.outcome, 'ok', `naive termination should cut the long request\n${describeRun(run)}`);
        return;
      }
      assert.deepEqual(runSequenceProblems(run), [], describeRun(run));
      // The request spans the part of the sequence it tests: in flight when the proxy drain began
      // and past the point where a proxy released at that instant would have been killed
      // (terminationDrainDuration later).
      const proof = run.result.proofs[0]!;
      const killedAt = proof.drainStartMs! + run.plan.timings.terminationDrainDurationSeconds * 1000;
      assert.ok(
        long.startMs - t0 < proof.drainStartMs! && long.endMs - t0 > killedAt,
        `the long request ran ${long.startMs - t0}..${long.endMs - t0} ms, across [3] at ${proof.drainStartMs} ms + terminationDrainDuration\n${describeRun(run)}`,
      );
      assert.equal(long.outcome, 'ok', describeRun(run));
      assert.deepEqual(lossProblems(run), [], describeRun(run));
    });
  }
}

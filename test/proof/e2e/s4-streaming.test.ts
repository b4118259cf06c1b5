import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRun, lossProblems, runSequenceProblems } from '../harness/expect';
import { istioProxy, pinnedProxies, proxyLabel } from '../harness/proxies';
import { runScenario } from '../harness/scenario';
import { S4 } from '../harness/scenarios';

// S4 (issue 5): a streamed response (19 chunks over 2.85 s) while its pod leaves, beside a light
// steady load, on each pinned Envoy. Naive cuts it partway; gracegate runs its whole sequence and
// lets the stream finish, because it ends within the drain timeout (3 s).
// The naive baseline tests no sidecar: it runs on the Istio release's Envoy only.
for (const proxy of pinnedProxies()) {
  for (const cfg of S4.filter((c) => c.termination !== 'naive' || proxyLabel(proxy) === proxyLabel(istioProxy()))) {
    test(`S4 ${cfg.termination} behind ${cfg.setting.label}, ${proxyLabel(proxy)}`, { timeout: 60_000 }, async () => {
      const run = await runScenario(cfg, proxy);
      const stream = run.records.find((r) => r.label === 'stream')!;
      const chunks = stream.chunks!;
      if (cfg.termination === 'naive') {
        assert.notEqual(stream.outcome, 'ok', describeRun(run));
        assert.ok(chunks.received < chunks.expected, `cut partway: ${chunks.received}/${chunks.expected}\n${describeRun(run)}`);
        return;
      }
      assert.deepEqual(runSequenceProblems(run), [], describeRun(run));
      const t0 = run.terminations[0]!.startMs;
      const proof = run.result.proofs[0]!;
      assert.ok(
        stream.endMs - t0 > proof.drainStartMs! + run.plan.timings.terminationDrainDurationSeconds * 1000,
        `the stream was still running terminationDrainDuration after [3]\n${describeRun(run)}`,
      );
      assert.equal(stream.outcome, 'ok', describeRun(run));
      const spec = cfg.load.requests![0]!.spec;
      assert.deepEqual(
        chunks,
        { received: spec.kind === 'stream' ? spec.chunks : -1, expected: spec.kind === 'stream' ? spec.chunks : -1 },
        'every chunk arrived',
      );
      assert.deepEqual(lossProblems(run), [], describeRun(run));
    });
  }
}

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyFailures, describeRun, hcStopProblems, lossProblems, runSequenceProblems } from '../harness/expect';
import { pinnedProxies, proxyLabel } from '../harness/proxies';
import { runScenario } from '../harness/scenario';
import { S5_GRACEGATE } from '../harness/scenarios';

// S5 (issue 5): steady load with mixed request lengths, one pod leaves, gracegate runs the sequence
// its planner chose for each LB behaviour. The sequence must have run (sequenceProblems), and every
// failure must be one the plan's findings predict, within the measured allowances (lossProblems):
// drain-first's connect cut at DOWN, HTTP/1's keep-alive race, and refused connections without
// redispatch. On each pinned Envoy. Behind disable-on-404 with retry-on (soft-drain) the plan predicts nothing: no
// failure of any kind is excused there.
for (const proxy of pinnedProxies())
  for (const cfg of S5_GRACEGATE) {
    test(`S5 gracegate behind ${cfg.setting.label}, ${proxyLabel(proxy)}`, { timeout: 90_000 }, async (t) => {
      const run = await runScenario(cfg, proxy);
      const r = run.result;
      assert.ok(r.requests > 50, `enough traffic: ${r.requests}`);
      assert.deepEqual(runSequenceProblems(run), [], describeRun(run));
      // The ordinary hc (s5-native-sidecar.test.ts runs the native one): SIGTERM at its preStop's end, refused probes until Envoy exits.
      const hcStop = hcStopProblems(run.terminations[0]!, 'container');
      assert.deepEqual(hcStop.problems, [], `${JSON.stringify(hcStop.view)}\n${describeRun(run)}`);
      t.diagnostic(
        `ordinary hc: SIGTERM ${-hcStop.view.hcSigtermAfterProxyExitMs} ms before istio-proxy's exit; LB probes before it: ${hcStop.view.answeredBeforeProxyExit} answered, ${hcStop.view.refusedBeforeProxyExit} refused`,
      );
      const predicted = run.plan.findings.filter((f) => f.expectedLoss !== undefined).map((f) => f.id);
      if (predicted.length === 0) {
        assert.equal(r.failureTotal, 0, `zero-excuse configuration: the plan predicts no loss, so none is excused\n${describeRun(run)}`);
        return;
      }
      assert.deepEqual(lossProblems(run), [], describeRun(run));
      if (predicted.includes('drain-first-without-redispatch')) {
        // The finding's loss happened: refused connections (HTTP 503 after HAProxy's retries).
        assert.ok(
          classifyFailures(run).other.some((x) => x.outcome === 'http-503'),
          `the predicted refused connections happened\n${describeRun(run)}`,
        );
      }
    });
  }

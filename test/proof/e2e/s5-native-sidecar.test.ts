import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRun, hcStopProblems, runSequenceProblems } from '../harness/expect';
import { pinnedProxies, proxyLabel } from '../harness/proxies';
import { runScenario } from '../harness/scenario';
import { S5_GRACEGATE } from '../harness/scenarios';

// S5 with the hc as a native sidecar (issue 12 §2; docs/native-sidecar.md): the lab spec says
// Kubernetes 1.33, the plan makes the hc native, and the harness's kubelet stops it in KEP-753's
// order. The same scenario with the ordinary hc is s5-steady-load.test.ts, which checks the other
// side of hcStopProblems. Behind the zero-excuse LB (the plan predicts no loss), on one Envoy: the
// sequence is the same in both kinds, only the hc's SIGTERM moves.
const zeroExcuse = S5_GRACEGATE[S5_GRACEGATE.length - 1]!;
const proxy = pinnedProxies()[0]!;

test(`S5 gracegate, native hc sidecar, behind ${zeroExcuse.setting.label}, ${proxyLabel(proxy)}`, { timeout: 90_000 }, async (t) => {
  const run = await runScenario({ ...zeroExcuse, hcSidecar: 'native' }, proxy);
  assert.equal(run.plan.hcSidecar.kind, 'native', 'the plan chose native from kubernetesVersion 1.33');
  const r = run.result;
  assert.ok(r.requests > 50, `enough traffic: ${r.requests}`);
  assert.deepEqual(runSequenceProblems(run), [], describeRun(run));
  assert.equal(r.failureTotal, 0, `zero-excuse configuration: nothing lost with the native hc either\n${describeRun(run)}`);
  const { problems, view } = hcStopProblems(run.terminations[0]!, 'native');
  assert.deepEqual(problems, [], `${JSON.stringify(view)}\n${describeRun(run)}`);
  assert.ok(view.answeredBeforeProxyExit > 0, 'the LB endpoint was sampled');
  t.diagnostic(
    `hc SIGTERM ${view.hcSigtermAfterProxyExitMs} ms after istio-proxy's exit; LB probes before it: ${view.answeredBeforeProxyExit} answered, ${view.refusedBeforeProxyExit} refused`,
  );
});

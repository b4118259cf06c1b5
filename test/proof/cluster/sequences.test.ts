/**
 * The termination proof on the real cluster (issue 25): every session of sessions.ts, each action
 * under load through a real HAProxy running lb-config's output. A gracegate run loses nothing the
 * plan does not predict and runs its sequence as promised, on the witnesses of the kubelet,
 * containerd, HAProxy and the sidecar (e2e/harness/expect.ts's checks); the article order must lose.
 * Each run's summary goes to .cache/cluster/results/ (report-main.ts makes docs/cluster from them).
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeRun } from '../harness/expect';
import { describeStops } from '../harness/machine-stops';
import { recordRun } from './results-file';
import { refreshSidecarImage } from './cluster';
import { requireCluster } from './require-cluster';
import { runSession, SESSIONS } from './sessions';
import { inRunOrder } from './start-half';
import { describeArrivals, describeFailures } from './arrivals';
import { describeSlices } from './witnesses';

before(async () => {
  requireCluster();
  await refreshSidecarImage();
});

// GRACEGATE_CLUSTER_SESSIONS=key,key runs only those (development; npm test runs them all).
const only = process.env.GRACEGATE_CLUSTER_SESSIONS?.split(',');
SESSIONS.forEach((s, i) => {
  if (only && !only.includes(s.key)) return;
  test(`cluster: ${s.key} (${s.setting.label}, istio/gateway ${s.chart}${s.hcSidecar === 'native' ? ', native sidecar' : ''}): ${s.actions.join(', ')} under load`, {
    timeout: 600_000,
  }, async (t) => {
    const outcome = await runSession(s, i);
    // istiod's injector left the hc's probes its own (rewriteAppHTTPProbers "false"), not moved to
    // pilot-agent's /app-health/gracegate-hc/… on 15020 (issue 30 point 1).
    assert.ok(outcome.hcProbes.length > 0, 'the gateway has pods');
    for (const p of outcome.hcProbes) assert.deepEqual([p.readiness, p.liveness], ['/health hc-health', '/live hc-health'], `${p.pod}: the hc's probes`);
    for (const { run, summary, problems } of outcome.runs) {
      recordRun(summary);
      // A stop of the machine itself excuses only the requests in flight across it (machine-stops.ts).
      if (run.run.machineStops.length > 0) t.diagnostic(`${s.key} ${run.action}: ${describeStops(run.run.machineStops, run.t0)}`);
      assert.deepEqual(
        problems,
        [],
        `${s.key} ${run.action}:\n${describeRun(run.run)}\nEndpointSlices:\n${describeSlices(run.slices, run.t0)}\nNew pods:\n${describeArrivals(run.arrivals)}\nFailures:\n${describeFailures(run.failures)}`,
      );
      assert.ok(run.leaving.length > 0, `${s.key} ${run.action}: a pod left`);
      // The planned anti-affinity: the LB's probe of each node reaches one pod (issue 30 point 5).
      for (const [node, n] of Object.entries(run.healthEndpoints)) assert.equal(n, 1, `${node}: the health NodePort reaches ${n} pods`);
      if (run.action === 'rollout') assert.equal(run.leaving.length, s.replicas, 'the rollout replaced every pod');
      // minReadySeconds (the plan's): the Deployment takes each old pod only once the LB has its
      // replacement UP. Pods pair in the order they ran (one pod per node: the i-th new pod is bound,
      // then the i-th old pod leaves). The UP is HAProxy's stamp, the leaving the kubelet's preStop.
      if (run.action === 'rollout' && s.order !== 'article' && !s.variant) {
        for (const { replacement, old: o } of inRunOrder(run.arrivals, run.leavingSpans)) {
          const up = replacement?.lbUpMs ?? null;
          assert.ok(
            up !== null && o.fromMs - run.t0 >= up,
            `${o.pod} began leaving at ${o.fromMs - run.t0} ms, before the LB had its replacement ${replacement?.pod ?? '-'} UP (${up ?? 'never'} ms): minReadySeconds ${run.run.plan.timings.minReadySeconds} s\n${describeArrivals(run.arrivals)}`,
          );
        }
      }
      // The start half (issue 50): where the LB's probe takes a port of the gateway's own Service, one
      // slice and one sync with the traffic, the LB takes a new pod's node in only once its traffic
      // NodePort leads to a pod: no new pod has a positive window. It may lead to a pod still leaving
      // the node (kube-proxy serves a terminating pod while the node has no ready one). The rules'
      // times are `nft monitor`'s reports, known to within the save that read them
      // (trafficRuleReadMs) and, as runs of 6 December showed, sometimes later still: the LB's first
      // request connected at once 10 to 172 ms after the UP while the rules were last seen dropping.
      // A positive window is the defect where the rules end it beyond their read time, or where the
      // LB sent requests into it before the first that connected (those met a dropped SYN); one
      // whose end is the LB's first request, connected, with nothing sent before it, is the witness's
      // lag. A request lost in any window fails `problems` above.
      if (s.order !== 'article' && !s.variant && run.run.plan.healthProbe.via === 'gateway-service') {
        for (const a of run.arrivals)
          assert.ok(
            a.windowMs === null || a.windowMs <= (a.trafficRuleReadMs ?? 0) || (a.windowEndBy === 'a request connected' && a.requestsInWindow === 0),
            `${a.pod}: the LB had its node UP ${a.windowMs} ms while the node dropped its traffic NodePort (read within ${a.trafficRuleReadMs} ms)\n${describeArrivals(run.arrivals)}`,
          );
      }
      if (run.action === 'evict')
        assert.match(
          run.secondEviction ?? '',
          /disruption budget|429|TooManyRequests/i,
          `a second eviction while the first pod leaves is refused by the PodDisruptionBudget (got: ${run.secondEviction})`,
        );
      if (s.order !== 'article') {
        for (const p of summary.pods) assert.equal(p.sigkills, 0, `${p.pod}: nothing was SIGKILLed`);
      }
      // The hc's probes are its own (rewriteAppHTTPProbers "false"): from the action to the hc's
      // SIGTERM every probe of it gets an answer, and liveness never fails (issue 30 point 1).
      // Issue 34 point 1: the kubelet's two hooks reach the witness port from a kubelet source
      // (the pod's default gateway on this bridge CNI), and nothing is refused.
      if (s.order !== 'article') {
        for (const l of run.leaving) {
          const lines = l.hcLog.flatMap((x) => {
            try {
              return [JSON.parse(x.text) as { msg?: string; source?: string }];
            } catch {
              return [];
            }
          });
          const from = (p: string) => lines.filter((x) => x.msg === `witness port: ${p} from a kubelet source`).map((x) => x.source);
          const refused = lines.filter((x) => /not a kubelet source/.test(x.msg ?? ''));
          console.log(
            `${s.key} ${run.action} ${l.pod.name}: /wait-closed from ${from('/wait-closed').join(', ')}; /hc-stopping from ${from('/hc-stopping').join(', ')}`,
          );
          assert.deepEqual(refused, [], `${l.pod.name}: a hook refused`);
          assert.ok(from('/wait-closed').length > 0 && from('/hc-stopping').length > 0, `${l.pod.name}: both hooks came from a kubelet source`);
        }
      }
      for (const p of summary.pods)
        assert.equal(p.hcProbeFailures, 0, `${p.pod}: the kubelet logged ${p.hcProbeFailures} failed liveness or unanswered probes of gracegate-hc`);
    }
  });
});

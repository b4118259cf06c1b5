import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planGateway } from '../../src/plan/plan-gateway';
import { resolved } from '../support/spec-builder';

test("the seed's worked numbers: p99 100 s, HAProxy inter 2 s fall 2", () => {
  const plan = planGateway(resolved());
  assert.equal(plan.timings.drainTimeoutSeconds, 120, 'ceil(1.2 x 100)');
  assert.equal(plan.timings.lbDetectSeconds, 4, '2 + (2-1) x 2');
  assert.equal(plan.timings.lbBufferSeconds, 10, '4 + 6');
  assert.equal(plan.timings.sequenceSeconds, 130);
  assert.equal(plan.timings.terminationDrainDurationSeconds, 5, "Istio's default: the proxy is held by preStop");
  assert.equal(plan.timings.finalScrapeWaitSeconds, 30, '2 x the 15 s scrape interval');
  assert.equal(plan.timings.terminationGracePeriodSeconds, 130 + Math.max(5, 30) + 30, "after the sequence, the longer of Envoy's exit and the final scrape");
});

test("the grace period never falls below the seed's formula max(drain + buffer, tdd) + 30", () => {
  // The seed's example keeps Envoy alive with terminationDrainDuration 150 s: its formula gives 180.
  const seed = planGateway(resolved({ spec: { envoy: { terminationDrainDurationSeconds: 150 } } }));
  const seedFormula = Math.max(120 + 10, 150) + 30; // max(drain + buffer, tdd) + 30 = 180
  assert.ok(seed.timings.terminationGracePeriodSeconds >= seedFormula);
  assert.equal(seed.timings.terminationGracePeriodSeconds, 130 + 150 + 30, 'Envoy gets SIGTERM only after the held sequence');

  // Even with the safety margin cut to 0, the seed floor holds.
  const thin = planGateway(resolved({ spec: { drain: { safetyMargin: 0 } } }));
  assert.equal(thin.timings.terminationGracePeriodSeconds, Math.max(120 + 10, 5) + 30);
});

test('every timing explains itself (formula, inputs, sources) and equals its value worked out by hand', () => {
  const plan = planGateway(resolved({ spec: { traffic: { longRequestP99Seconds: '90s' }, drain: { lbMargin: 4 } } }));
  // p99 90 s behind HAProxy inter 2 s, fall 2, rise 2 (fastinter and downinter default to inter),
  // lbMargin 4 s, everything else at its default:
  const byHand = {
    drainTimeoutSeconds: 108, // max(ceil(1.2 x 90), ceil(HCM drain_timeout 5 + poll 1))
    lbDetectSeconds: 4, // 2 + (2 - 1) x 2
    lbBufferSeconds: 8, // 4 + 4
    sequenceSeconds: 116, // 108 + 8
    terminationDrainDurationSeconds: 5, // Istio's default
    finalScrapeWaitSeconds: 30, // 2 x scrapeInterval 15 s (Prometheus scrapes the sidecar by default)
    terminationGracePeriodSeconds: 176, // max(116 + max(5, 30) + safetyMargin 30, max(108 + 8, 5) + 30)
    drainDurationSeconds: 45, // Istio's default
    pollIntervalSeconds: 1, // default
    lbRecoverSeconds: 4, // downinter 2 + (2 - 1) x fastinter 2
    startHoldSeconds: 2, // the LB probes a health Service of its own: minSyncPeriod 1 + propagation 1
    minReadySeconds: 11, // ceil(2 + 4 + 4) + 1: the start hold, the rise, the margin, the Ready time's second
  };
  assert.deepEqual(plan.timings, byHand);
  for (const [name, d] of Object.entries(plan.derivations)) {
    assert.equal(d.value, byHand[name as keyof typeof byHand], name);
    assert.ok(d.formula.length > 0, `${name} has a formula`);
    assert.ok(Object.keys(d.inputs).length > 0, `${name} has inputs`);
    for (const [input, i] of Object.entries(d.inputs)) assert.ok(i.source.length > 0, `${name}.${input} has a source`);
  }
  assert.equal(plan.derivations.drainTimeoutSeconds.inputs.longRequestP99Seconds!.source, 'spec.traffic.longRequestP99Seconds');
  assert.equal(plan.derivations.lbBufferSeconds.inputs.lbMargin!.source, 'spec.drain.lbMargin');
});

test('a short p99 cannot push the drain timeout below two polls; idle keep-alive connections set no floor', () => {
  const short = planGateway(resolved({ spec: { traffic: { longRequestP99Seconds: 2 } } }));
  assert.equal(short.timings.drainTimeoutSeconds, 3, 'max(ceil(2.4), ceil(2 x 1))');
  assert.equal(short.derivations.drainTimeoutSeconds.formula, 'max(ceil(1.2 x longRequestP99Seconds), ceil(2 x pollInterval))');
  assert.deepEqual(Object.keys(short.derivations.drainTimeoutSeconds.inputs).sort(), ['longRequestP99Seconds', 'pollInterval']);
  const tiny = planGateway(resolved({ spec: { traffic: { longRequestP99Seconds: '100ms' }, drain: { pollInterval: '2s' } } }));
  assert.equal(tiny.timings.drainTimeoutSeconds, 4, 'max(ceil(0.12), ceil(2 x 2))');
  assert.throws(
    () => planGateway(resolved({ spec: { traffic: { longRequestP99Seconds: 2 }, envoy: { hcmDrainTimeoutSeconds: 30 } } })),
    /spec\.envoy\.hcmDrainTimeoutSeconds: removed: no timing depends on it\. Envoy's HCM drain_timeout closes no idle keep-alive connection on a drain/,
    "Envoy's drain_timeout no longer matters: idle connections are not waited for, and a spec that still sets it is told so",
  );
});

test('drain-first behind an LB that reuses connections to the pod waits for two requests per connection; a new connection per request, or another order, for one', () => {
  const cases: Array<[string, Record<string, unknown>, number, boolean]> = [
    ['HAProxy drain-first (lb-config writes option http-server-close)', { model: 'haproxy', onMarkedDown: 'shutdown-sessions', redispatch: true }, 12, false],
    [
      'HAProxy drain-first, httpServerClose: false',
      { model: 'haproxy', onMarkedDown: 'shutdown-sessions', redispatch: true, httpServerClose: false },
      24,
      true,
    ],
    ['HAProxy health-first, httpServerClose: false (the LB stops sending before the drain)', { model: 'haproxy', httpServerClose: false }, 12, false],
    ['Citrix drain-first (connection multiplexing)', { model: 'citrix', retryOnReset: true }, 24, true],
    ['Citrix drain-first, maxReq 1', { model: 'citrix', maxReq: 1, retryOnReset: true }, 12, false],
    ['F5 drain-first', { model: 'f5', serviceDownAction: 'reset', reselectTries: 1 }, 24, true],
    ['Citrix soft-drain', { model: 'citrix', trofsCode: 299 }, 12, false],
  ];
  for (const [label, lb, drainTimeout, reuse] of cases) {
    const plan = planGateway(resolved({ spec: { traffic: { longRequestP99Seconds: 10 }, loadBalancer: lb } }));
    assert.equal(plan.timings.drainTimeoutSeconds, drainTimeout, label);
    const d = plan.derivations.drainTimeoutSeconds;
    assert.equal(
      d.formula,
      reuse
        ? 'max(ceil(1.2 x requestsPerConnection x longRequestP99Seconds), ceil(2 x pollInterval))'
        : 'max(ceil(1.2 x longRequestP99Seconds), ceil(2 x pollInterval))',
      label,
    );
    assert.equal(d.inputs.requestsPerConnection?.value, reuse ? 2 : undefined, label);
    assert.equal(
      plan.findings.some((f) => f.id === 'drain-first-connection-reuse'),
      reuse,
      label,
    );
  }
  const nlb = planGateway(
    resolved({
      spec: {
        traffic: { longRequestP99Seconds: 10 },
        loadBalancer: { model: 'nlb', targetType: 'ip' },
        health: { exposure: 'clusterIP' },
        sequence: 'drain-first',
      },
    }),
  );
  assert.match(nlb.derivations.drainTimeoutSeconds.inputs.requestsPerConnection!.source, /an NLB passes the clients' own TCP connections to the pod/);
});

test("the connection-reuse finding: the residue after [4], its vendor's fix, and a drain timeout override below two requests", () => {
  const citrix = planGateway(
    resolved({ spec: { traffic: { longRequestP99Seconds: 10 }, loadBalancer: { model: 'citrix', retryOnReset: true }, drain: { timeout: '15s' } } }),
  );
  const f = citrix.findings.find((x) => x.id === 'drain-first-connection-reuse')!;
  assert.equal(f.severity, 'warning');
  assert.equal(f.expectedLoss, 'reused-connection-cut-at-down');
  assert.match(f.message, /a request the LB sends on an idle connection after \[4\].*is served too, and if it is still running at DOWN the flush cuts it/);
  assert.match(f.message, /spec\.drain\.timeout 15s is below two requests \(2 x 10s\)/);
  assert.match(f.remediation, /maxReq: 1/);
  assert.equal(f.evidence, 'docs/envoy.md#drain-first-behind-an-lb-that-reuses-connections');
  // The fix does not lead back: with maxReq 1 the finding is gone and nothing asks for reuse again.
  const fixed = planGateway(resolved({ spec: { traffic: { longRequestP99Seconds: 10 }, loadBalancer: { model: 'citrix', maxReq: 1, retryOnReset: true } } }));
  assert.ok(!fixed.findings.some((x) => x.id === 'drain-first-connection-reuse'));
  assert.ok(!fixed.findings.some((x) => /maxReq/.test(x.remediation) && x.id !== 'drain-first-connection-reuse'));
});

test('a drain timeout override is used as given, and a value below p99 is a finding', () => {
  const plan = planGateway(resolved({ spec: { drain: { timeout: '60s' } } }));
  assert.equal(plan.timings.drainTimeoutSeconds, 60);
  const f = plan.findings.find((x) => x.id === 'drain-timeout-below-p99');
  assert.ok(f);
  assert.equal(f.severity, 'warning');
  assert.match(f.remediation, /at least 120s/);
});

test('a p99 that cannot fit under a sane grace period is a finding', () => {
  const plan = planGateway(resolved({ spec: { traffic: { longRequestP99Seconds: '10m' } } }));
  assert.equal(plan.timings.drainTimeoutSeconds, 720);
  assert.ok(plan.findings.some((f) => f.id === 'grace-period-too-long'));
  assert.ok(!planGateway(resolved()).findings.some((f) => f.id === 'grace-period-too-long'));
});

test('sub-second LB timings stay exact (time-compressed end-to-end specs)', () => {
  const plan = planGateway(resolved({ spec: { loadBalancer: { model: 'haproxy', inter: '100ms', fall: 3 }, drain: { lbMargin: '300ms' } } }));
  assert.equal(plan.timings.lbDetectSeconds, 0.3);
  assert.equal(plan.timings.lbBufferSeconds, 0.6);
});

test("minReadySeconds: the time until the LB's probe can pass, the rise, the margin, and the second the Deployment's clock takes off it", () => {
  // HAProxy inter 300 ms, rise 1 (rise 300 ms), lbMargin 0.5 s: the lab's compressed timings, where
  // the cluster showed the old pod leaving up to 1.4 s before the LB had its replacement UP while
  // minReadySeconds was ceil(0 + 0.3 + 0.5) = 1 (docs/cluster.md, "The start half of a rollout").
  const lb = { model: 'haproxy', inter: '300ms', fall: 2, rise: 1 };
  const short = { traffic: { longRequestP99Seconds: 2 }, drain: { lbMargin: 0.5 }, loadBalancer: lb };
  const viaRules = planGateway(resolved({ spec: { ...short, health: { exposure: 'nodePort', service: 'gateway' } } }));
  assert.equal(viaRules.timings.startHoldSeconds, 0, 'through the traffic rules the probe cannot pass early: nothing to hold');
  assert.equal(viaRules.timings.minReadySeconds, 4, "ceil(2 + 0.3 + 0.5) + 1: the node's rules (minSyncPeriod 1 s + propagation 1 s) before the probe passes");
  const d = viaRules.derivations.minReadySeconds;
  assert.equal(d.formula, 'ceil(probePassesSeconds + lbRecoverSeconds + lbMargin) + readyTimeGranularity');
  assert.equal(d.inputs.probePassesSeconds!.value, 2);
  assert.match(d.inputs.probePassesSeconds!.source, /kubeProxy\.minSyncPeriod \+ kubeProxy\.propagation/);
  assert.equal(d.inputs.readyTimeGranularity!.value, 1);
  assert.match(d.inputs.readyTimeGranularity!.source, /IsPodAvailable/);
  const own = planGateway(resolved({ spec: { ...short, health: { exposure: 'nodePort', service: 'own' } } }));
  assert.equal(own.timings.startHoldSeconds, 2);
  assert.equal(own.timings.minReadySeconds, 4, 'ceil(2 + 0.3 + 0.5) + 1: the start hold before the probe passes');
  assert.match(own.derivations.minReadySeconds.inputs.probePassesSeconds!.source, /startHoldSeconds/);
  const slowSync = planGateway(resolved({ spec: { ...short, kubeProxy: { minSyncPeriod: 5 }, health: { exposure: 'nodePort', service: 'gateway' } } }));
  assert.equal(slowSync.timings.minReadySeconds, 8, 'ceil(5 + 1 + 0.3 + 0.5) + 1: a slower kube-proxy sync, a longer wait');
  // The LB probes the pod's IP (an in-mesh Envoy, clusterIP): no node rule stands before the probe.
  const podIp = planGateway(
    resolved({
      spec: { ...short, loadBalancer: { model: 'envoy', activeHealthCheck: { interval: 2, healthyThreshold: 2 } }, health: { exposure: 'clusterIP' } },
    }),
  );
  assert.equal(podIp.derivations.minReadySeconds.inputs.probePassesSeconds!.value, 0);
  assert.equal(podIp.timings.minReadySeconds, Math.ceil(0 + podIp.timings.lbRecoverSeconds + 0.5) + 1);
});

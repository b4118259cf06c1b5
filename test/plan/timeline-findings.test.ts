import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planGateway, type Plan } from '../../src/plan/plan-gateway';
import { resolved } from '../support/spec-builder';

const eventAt = (plan: Plan, id: number) => plan.timeline.entries.find((e) => e.event === id)!.atSeconds;

test('drain-first: in-flight reaches zero [4] before the LB marks DOWN [5], health fails at [4]', () => {
  const plan = planGateway(resolved());
  assert.equal(plan.sequence, 'drain-first');
  assert.equal(eventAt(plan, 3), 0);
  assert.equal(eventAt(plan, 4), 120);
  assert.equal(eventAt(plan, 1), 120);
  assert.equal(eventAt(plan, 5), 124);
  assert.equal(eventAt(plan, 2), 130);
  const ids = plan.timeline.entries.filter((e) => e.event).map((e) => e.event);
  assert.deepEqual(ids, [3, 4, 1, 5, 6, 2]);
});

test('drain-first is never called lossless: the flush at DOWN cuts the connects under way (the e2e measures it)', () => {
  const plan = planGateway(resolved());
  assert.equal(plan.sequence, 'drain-first');
  assert.equal(plan.timeline.lossless, false);
  assert.match(plan.timeline.losslessReason, /re-sent elsewhere.*only the requests the LB is still connecting/);
  const race = plan.findings.find((f) => f.id === 'drain-first-cuts-connects-at-down');
  assert.ok(race, 'the residual race is a finding');
  assert.equal(race.severity, 'info');
  assert.equal(race.expectedLoss, 'cut-connects-at-down');
  assert.match(race.remediation, /disableOn404: true/);
});

test('the connect-race estimate is rate x round trip when the rate is given, the formula when not', () => {
  const given = planGateway(
    resolved({ spec: { replicas: 4, nodes: 5, traffic: { longRequestP99Seconds: 100, requestsPerSecondPerPod: 800, lbToPodRoundTripMs: 0.25 } } }),
  );
  const msg = given.findings.find((f) => f.id === 'drain-first-cuts-connects-at-down')!.message;
  assert.match(msg, /800 req\/s x spec\.traffic\.lbToPodRoundTripMs 0\.25 ms = 0\.2 requests per pod termination, 0\.8 per rollout of all 4 pods/);
  const formula = planGateway(resolved()).findings.find((f) => f.id === 'drain-first-cuts-connects-at-down')!.message;
  assert.match(formula, /lbToPodRoundTripMs 0\.5 ms\), e\.g\. 1,000 req\/s -> 0\.5 requests; set spec\.traffic\.requestsPerSecondPerPod/);
});

test('the connect race belongs to drain-first only: soft-drain and health-first plans do not report it', () => {
  const softDrain = planGateway(resolved({ spec: { loadBalancer: { model: 'haproxy', onMarkedDown: 'shutdown-sessions', disableOn404: true } } }));
  const healthFirst = planGateway(resolved({ spec: { loadBalancer: { model: 'haproxy' } } }));
  assert.deepEqual([softDrain.sequence, healthFirst.sequence], ['soft-drain', 'health-first']);
  for (const plan of [softDrain, healthFirst]) {
    assert.ok(!plan.findings.some((f) => f.id === 'drain-first-cuts-connects-at-down'));
    assert.ok(plan.timeline.lossless);
  }
});

test("the connect-race remediation names each vendor's own field", () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ model: 'citrix', retryOnReset: true }, /trofsCode/],
    [{ model: 'f5', serviceDownAction: 'reset', reselectTries: 1 }, /recvDisable/],
  ];
  for (const [lb, field] of cases) {
    const plan = planGateway(resolved({ spec: { loadBalancer: lb } }));
    assert.equal(plan.sequence, 'drain-first', JSON.stringify(lb));
    assert.match(plan.findings.find((f) => f.id === 'drain-first-cuts-connects-at-down')!.remediation, field);
  }
});

test('health-first: the LB is told first, the proxy drains after the buffer', () => {
  const plan = planGateway(resolved({ spec: { loadBalancer: { model: 'haproxy', inter: '2s', fall: 2 } } }));
  assert.equal(plan.sequence, 'health-first');
  assert.deepEqual([eventAt(plan, 1), eventAt(plan, 5), eventAt(plan, 3), eventAt(plan, 4)], [0, 4, 10, 130]);
  assert.ok(plan.timeline.lossless);
});

test('soft-drain: signal, buffer, drain, zero, then the hard failure and DOWN', () => {
  const plan = planGateway(
    resolved({ spec: { loadBalancer: { model: 'haproxy', inter: '2s', fall: 2, onMarkedDown: 'shutdown-sessions', disableOn404: true } } }),
  );
  assert.equal(plan.sequence, 'soft-drain');
  assert.ok(eventAt(plan, 4) < eventAt(plan, 5));
  assert.equal(eventAt(plan, 3), plan.timings.lbBufferSeconds);
});

test('every timeline ends with the SIGKILL deadline at the grace period, after Envoy exits', () => {
  for (const lb of [{ model: 'haproxy' }, { model: 'citrix', trofsCode: 299 }, { model: 'f5' }]) {
    const plan = planGateway(resolved({ spec: { loadBalancer: lb } }));
    const last = plan.timeline.entries.at(-1)!;
    assert.equal(last.name, 'SIGKILL deadline');
    assert.equal(last.atSeconds, plan.timings.terminationGracePeriodSeconds);
    const exit = plan.timeline.entries.find((e) => e.name === 'Envoy exits')!;
    assert.ok(exit.atSeconds < last.atSeconds);
  }
});

test('drain-first without redispatch is an error finding predicting refused connections', () => {
  const plan = planGateway(resolved({ spec: { loadBalancer: { model: 'haproxy', onMarkedDown: 'shutdown-sessions' }, sequence: 'drain-first' } }));
  const f = plan.findings.find((x) => x.id === 'drain-first-without-redispatch');
  assert.ok(f);
  assert.equal(f.severity, 'error');
  assert.equal(f.expectedLoss, 'refused-connections');
  assert.match(f.remediation, /option redispatch/);
  assert.equal(plan.timeline.lossless, false);
});

test("Citrix and F5 drain-first: the vendors' documentation says a refused connection reaches the client unless re-sent", () => {
  for (const loadBalancer of [{ model: 'citrix' }, { model: 'f5', serviceDownAction: 'reset' }]) {
    const plan = planGateway(resolved({ spec: { loadBalancer } }));
    assert.equal(plan.loadBalancer.refused.value, 'failed', loadBalancer.model);
    assert.equal(plan.loadBalancer.refused.source.kind, 'vendor-doc', loadBalancer.model);
  }
  for (const loadBalancer of [
    { model: 'citrix', retryOnReset: true },
    { model: 'f5', serviceDownAction: 'reset', reselectTries: 1 },
  ]) {
    const plan = planGateway(resolved({ spec: { loadBalancer } }));
    assert.equal(plan.loadBalancer.refused.value, 'resent', loadBalancer.model);
  }
});

test('chart versions whose values cannot carry the sidecar, strategy or grace period', () => {
  const ids = (version: string) => planGateway(resolved({ spec: { chart: { kind: 'istio-gateway', version } } })).findings.map((f) => f.id);
  assert.ok(ids('1.26.8').includes('chart-cannot-hold-proxy'));
  assert.ok(!ids('1.27.9').includes('chart-cannot-hold-proxy'));
  assert.ok(ids('1.22.0').includes('chart-no-strategy'));
  assert.ok(ids('1.18.2').includes('chart-no-grace-period'));
  const inHouse = planGateway(resolved({ spec: { chart: { kind: 'additional-containers', version: '0.1.0' } } }));
  assert.ok(!inHouse.findings.some((f) => f.id.startsWith('chart-')));
});

test('hostPort and ClusterIP exposure findings', () => {
  const host = planGateway(resolved({ spec: { nodes: 2, health: { exposure: 'hostPort' } } }));
  assert.ok(host.findings.some((f) => f.id === 'hostport-one-pod-per-node'));
  const clusterIp = planGateway(resolved({ spec: { health: { exposure: 'clusterIP' } } }));
  assert.ok(clusterIp.findings.some((f) => f.id === 'health-clusterip-unreachable' && f.severity === 'error'));
});

test('findings are sorted by severity, errors first', () => {
  const plan = planGateway(resolved({ spec: { replicas: 1, nodes: 1, loadBalancer: { model: 'haproxy', onMarkedDown: 'shutdown-sessions' } } }));
  const ranks = plan.findings.map((f) => ({ error: 3, warning: 2, info: 1 })[f.severity]);
  assert.deepEqual(
    ranks,
    [...ranks].sort((a, b) => b - a),
  );
});

test('NetScaler TROFS with persistence honoured: soft-drain is not lossless, and a finding says how to fix it', () => {
  const lb = { model: 'citrix', trofsCode: 299, persistenceType: 'SOURCEIP' };
  const sticky = planGateway(resolved({ spec: { loadBalancer: lb } }));
  assert.equal(sticky.sequence, 'soft-drain');
  assert.equal(sticky.timeline.lossless, false);
  assert.match(sticky.timeline.losslessReason, /still sends clients held by SOURCEIP persistence/);
  const f = sticky.findings.find((x) => x.id === 'citrix-trofs-keeps-persistent-clients');
  assert.ok(f);
  assert.equal(f.expectedLoss, 'refused-connections');
  assert.match(f.remediation, /trofsPersistence: DISABLED/);
  // The fix clears the finding and gives nothing new to fix.
  const fixed = planGateway(resolved({ spec: { loadBalancer: { ...lb, trofsPersistence: 'DISABLED' } } }));
  assert.ok(fixed.timeline.lossless);
  assert.deepEqual(
    fixed.findings.map((x) => x.id),
    sticky.findings.map((x) => x.id).filter((id) => id !== 'citrix-trofs-keeps-persistent-clients'),
  );
  // Without persistence there is nothing to honour.
  assert.ok(planGateway(resolved({ spec: { loadBalancer: { model: 'citrix', trofsCode: 299 } } })).timeline.lossless);
});

test('NLB ip targets: a deregistration delay with connection termination must outlast the whole sequence', () => {
  const lb = { model: 'nlb', targetType: 'ip', unhealthyConnectionTermination: false, deregistrationConnectionTermination: true, deregistrationDelay: '150s' };
  const plan = planGateway(resolved({ spec: { loadBalancer: lb, health: { exposure: 'clusterIP' } } }));
  assert.equal(plan.timings.sequenceSeconds, 120 + 126);
  const f = plan.findings.find((x) => x.id === 'nlb-deregistration-delay-short');
  assert.ok(f, 'the delay (150 s) runs from the deletion and ends before the sequence (246 s)');
  assert.match(f.remediation, /at least 246s/);
  const fixed = planGateway(resolved({ spec: { loadBalancer: { ...lb, deregistrationDelay: '246s' }, health: { exposure: 'clusterIP' } } }));
  assert.ok(!fixed.findings.some((x) => x.id === 'nlb-deregistration-delay-short'));
});

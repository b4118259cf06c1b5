import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planGateway } from '../../src/plan/plan-gateway';
import { resolved } from '../support/spec-builder';

const sequenceOf = (loadBalancer: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  planGateway(resolved({ spec: { loadBalancer, ...extra } })).sequence;

test('a graceful signal wins: soft-drain', () => {
  assert.equal(sequenceOf({ model: 'haproxy', onMarkedDown: 'shutdown-sessions', disableOn404: true }), 'soft-drain');
  assert.equal(sequenceOf({ model: 'citrix', trofsCode: 299 }), 'soft-drain');
  assert.equal(sequenceOf({ model: 'f5', serviceDownAction: 'reset', recvDisable: 'DRAINING' }), 'soft-drain');
});

test('an LB that keeps sessions on DOWN: health-first', () => {
  assert.equal(sequenceOf({ model: 'haproxy' }), 'health-first');
  assert.equal(sequenceOf({ model: 'citrix', downStateFlush: 'DISABLED' }), 'health-first');
  assert.equal(sequenceOf({ model: 'f5', serviceDownAction: 'none' }), 'health-first');
  assert.equal(sequenceOf({ model: 'nlb', targetType: 'ip', unhealthyConnectionTermination: false }, { health: { exposure: 'clusterIP' } }), 'health-first');
  assert.equal(sequenceOf({ model: 'envoy', activeHealthCheck: { interval: 2 } }, { health: { exposure: 'clusterIP' } }), 'health-first');
});

test('an LB that cuts sessions on DOWN without a signal: drain-first where it re-sends refused connections, else health-first', () => {
  // drain-first refuses new connections until DOWN: behind an LB that re-sends them it loses only the
  // connects under way at DOWN; behind one that does not, every request of that window (issue 48).
  assert.equal(sequenceOf({ model: 'haproxy', onMarkedDown: 'shutdown-sessions', redispatch: true }), 'drain-first');
  assert.equal(sequenceOf({ model: 'citrix', retryOnReset: true }), 'drain-first');
  assert.equal(sequenceOf({ model: 'f5', serviceDownAction: 'reset', reselectTries: 1 }), 'drain-first');
  assert.equal(sequenceOf({ model: 'haproxy', onMarkedDown: 'shutdown-sessions' }), 'health-first');
  assert.equal(sequenceOf({ model: 'citrix' }), 'health-first');
  assert.equal(sequenceOf({ model: 'f5', serviceDownAction: 'reset' }), 'health-first');
  assert.equal(sequenceOf({ model: 'nlb', targetType: 'ip' }, { health: { exposure: 'clusterIP' } }), 'health-first');
});

test("the plan's order has the least expected loss, and every order's loss is in the plan", () => {
  for (const loadBalancer of [
    { model: 'haproxy', onMarkedDown: 'shutdown-sessions' },
    { model: 'f5', serviceDownAction: 'reset', reselectTries: 1 },
  ]) {
    const plan = planGateway(resolved({ spec: { loadBalancer } }));
    assert.deepEqual(
      plan.orders.map((o) => o.order),
      ['soft-drain', 'health-first', 'drain-first'],
    );
    const chosen = plan.orders.find((o) => o.order === plan.sequence)!;
    for (const o of plan.orders.filter((x) => x.runnable)) assert.ok(chosen.expected <= o.expected + 0.005, `${plan.sequence} against ${o.order}`);
    assert.match(plan.sequenceReason, /^the least expected loss: /);
  }
});

test('spec.sequence forces an order; where it loses more than the least, a warning says by how much', () => {
  const forced = planGateway(resolved({ spec: { loadBalancer: { model: 'haproxy', onMarkedDown: 'shutdown-sessions' }, sequence: 'drain-first' } }));
  assert.equal(forced.sequence, 'drain-first');
  const f = forced.findings.find((x) => x.id === 'sequence-not-least-loss')!;
  assert.equal(f.severity, 'warning');
  assert.match(f.message, /spec\.sequence forces drain-first, expected to lose \d+ requests per pod termination; health-first would lose/);
  const least = planGateway(
    resolved({ spec: { loadBalancer: { model: 'haproxy', onMarkedDown: 'shutdown-sessions', redispatch: true }, sequence: 'drain-first' } }),
  );
  assert.equal(
    least.findings.some((x) => x.id === 'sequence-not-least-loss'),
    false,
    'forcing the least is no finding',
  );
});

test('a graceful signal the probe never sees (NLB instance targets) does not count', () => {
  // NLB has no soft signal in the schema; the rule is exercised through probeReachesSidecar.
  const plan = planGateway(resolved({ spec: { loadBalancer: { model: 'nlb' } } }));
  assert.equal(plan.loadBalancer.probeReachesSidecar, false);
  assert.ok(plan.findings.some((f) => f.id === 'nlb-instance-probe-bypasses-sidecar' && f.severity === 'error'));
});

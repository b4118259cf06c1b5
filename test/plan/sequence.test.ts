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

test('an LB that cuts sessions on DOWN without a signal: drain-first', () => {
  assert.equal(sequenceOf({ model: 'haproxy', onMarkedDown: 'shutdown-sessions', redispatch: true }), 'drain-first');
  assert.equal(sequenceOf({ model: 'haproxy', onMarkedDown: 'shutdown-sessions' }), 'drain-first');
  assert.equal(sequenceOf({ model: 'citrix' }), 'drain-first');
  assert.equal(sequenceOf({ model: 'f5', serviceDownAction: 'reset' }), 'drain-first');
  assert.equal(sequenceOf({ model: 'nlb', targetType: 'ip' }, { health: { exposure: 'clusterIP' } }), 'drain-first');
});

test('a graceful signal the probe never sees (NLB instance targets) does not count', () => {
  // NLB has no soft signal in the schema; the rule is exercised through probeReachesSidecar.
  const plan = planGateway(resolved({ spec: { loadBalancer: { model: 'nlb' } } }));
  assert.equal(plan.loadBalancer.probeReachesSidecar, false);
  assert.ok(plan.findings.some((f) => f.id === 'nlb-instance-probe-bypasses-sidecar' && f.severity === 'error'));
});

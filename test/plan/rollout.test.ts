import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planGateway } from '../../src/plan/plan-gateway';
import { resolved } from '../support/spec-builder';

const rolloutOf = (spec: Record<string, unknown>) => planGateway(resolved({ spec }));

test('a spare node: surge first and keep capacity', () => {
  const plan = rolloutOf({ replicas: 2, nodes: 3 });
  assert.deepEqual([plan.rollout.maxSurge, plan.rollout.maxUnavailable, plan.rollout.antiAffinity], [1, 0, 'required']);
  assert.equal(plan.rollout.pdbMaxUnavailable, 1);
  assert.equal(plan.findings.filter((f) => f.severity === 'error').length, 0);
});

test('one pod per node and no spare node: replace in place (maxSurge 0, maxUnavailable 1)', () => {
  const plan = rolloutOf({ replicas: 2, nodes: 2 });
  assert.deepEqual([plan.rollout.maxSurge, plan.rollout.maxUnavailable], [0, 1]);
  const hostPort = rolloutOf({ replicas: 3, nodes: 3, health: { exposure: 'hostPort' } });
  assert.deepEqual([hostPort.rollout.maxSurge, hostPort.rollout.maxUnavailable, hostPort.rollout.onePodPerNode], [0, 1, true]);
});

test('more replicas than nodes: preferred anti-affinity, surge allowed', () => {
  const plan = rolloutOf({ replicas: 4, nodes: 2 });
  assert.equal(plan.rollout.antiAffinity, 'preferred');
  assert.deepEqual([plan.rollout.maxSurge, plan.rollout.maxUnavailable], [1, 0]);
});

test('the deadlock combination is an error finding with the fix (kubernetes#116891)', () => {
  const plan = rolloutOf({ replicas: 2, nodes: 2, rollout: { maxSurge: 1, maxUnavailable: 0, antiAffinity: 'required' } });
  const f = plan.findings.find((x) => x.id === 'rollout-surge-deadlock');
  assert.ok(f, 'deadlock reported');
  assert.equal(f.severity, 'error');
  assert.match(f.message, /Pending forever/);
  assert.match(f.remediation, /maxSurge 0, maxUnavailable 1, or antiAffinity preferred .*, or add 1 node/);
  // The same overrides with a spare node are fine.
  assert.ok(!rolloutOf({ replicas: 2, nodes: 3, rollout: { maxSurge: 1, maxUnavailable: 0 } }).findings.some((x) => x.id === 'rollout-surge-deadlock'));
  // hostPort deadlocks the same way, whatever the anti-affinity says.
  assert.ok(
    rolloutOf({ replicas: 2, nodes: 2, health: { exposure: 'hostPort' }, rollout: { maxUnavailable: 0, antiAffinity: 'none' } }).findings.some(
      (x) => x.id === 'rollout-surge-deadlock',
    ),
  );
});

test('required anti-affinity with more replicas than nodes cannot schedule', () => {
  const plan = rolloutOf({ replicas: 3, nodes: 2, rollout: { antiAffinity: 'required' } });
  assert.ok(plan.findings.some((f) => f.id === 'anti-affinity-unschedulable' && f.severity === 'error'));
});

test('one replica: warned, and no PDB that would block node drains', () => {
  const plan = rolloutOf({ replicas: 1, nodes: 2 });
  assert.equal(plan.rollout.pdbMaxUnavailable, null);
  assert.ok(plan.findings.some((f) => f.id === 'single-replica'));
});

test('maxUnavailable that takes every replica down is an error', () => {
  const plan = rolloutOf({ replicas: 2, nodes: 4, rollout: { maxUnavailable: 2 } });
  assert.ok(plan.findings.some((f) => f.id === 'rollout-takes-all-pods'));
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Testing } from 'cdk8s';
import { GracefulGateway, HcSidecar } from '../../src/delivery/cdk8s/constructs';
import { ApiObject } from 'cdk8s';
import { planGateway } from '../../src/plan/plan-gateway';
import { applyAutoscaler, applyPodChanges, autoscalerObject, podChanges, type K8sObject } from '../../src/pod';
import type { GatewaySpecInput } from '../../src/schema/gateway-spec';
import { validateK8s } from '../emit/helpers';
import { resolved, specInput } from '../support/spec-builder';
import { testChart } from '../support/cdk8s';

const BEHAVIOR = { scaleDown: { stabilizationWindowSeconds: 600, policies: [{ type: 'Pods' as const, value: 1, periodSeconds: 180 }] } };
const AUTOSCALED = { replicas: undefined, autoscaling: { minReplicas: 2, maxReplicas: 4, targetCPUUtilizationPercentage: 60, behavior: BEHAVIOR } };
const changesOf = (spec: Record<string, unknown>) => podChanges(planGateway(resolved({ spec })));

/** A Deployment as a chart renders it, with a replica count. */
const rendered = (): K8sObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'igw', namespace: 'istio-ingress' },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'igw' } },
    template: { metadata: { labels: { app: 'igw', istio: 'igw' } }, spec: { containers: [{ name: 'istio-proxy', image: 'auto' }] } },
  },
});

test('pod changes: an autoscaled spec has no replica count and carries the HPA the plan is for', () => {
  const c = changesOf(AUTOSCALED);
  assert.equal(c.replicas, null);
  assert.deepEqual(c.autoscaler, { minReplicas: 2, maxReplicas: 4, targetCPUUtilizationPercentage: 60, behavior: BEHAVIOR });
  assert.equal(c.disruptionBudget?.maxUnavailable, 1);
  const fixed = changesOf({});
  assert.equal(fixed.replicas, 2);
  assert.equal(fixed.autoscaler, null);
});

test('applyPodChanges never leaves replicas on a Deployment an HPA owns; a fixed count is set', () => {
  assert.equal((applyPodChanges(rendered(), changesOf(AUTOSCALED)).spec as Record<string, unknown>).replicas, undefined);
  assert.equal((applyPodChanges(rendered(), changesOf(AUTOSCALED), { setReplicas: true }).spec as Record<string, unknown>).replicas, undefined);
  assert.equal((applyPodChanges(rendered(), changesOf({})).spec as Record<string, unknown>).replicas, 2);
});

test("applyAutoscaler: the chart's HPA gets the range; the behaviour merges, the CPU target replaces the CPU metric only; idempotent", () => {
  const hpa: K8sObject = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'igw', labels: { app: 'igw' } },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'igw' },
      minReplicas: 1,
      maxReplicas: 5,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
        { type: 'Resource', resource: { name: 'memory', target: { type: 'Utilization', averageUtilization: 75 } } },
      ],
      behavior: {
        scaleUp: { stabilizationWindowSeconds: 30 },
        scaleDown: { selectPolicy: 'Min', policies: [{ type: 'Percent', value: 50, periodSeconds: 60 }] },
      },
    },
  };
  const c = changesOf(AUTOSCALED);
  const once = applyAutoscaler(hpa, c);
  const spec = once.spec as Record<string, any>;
  assert.deepEqual([spec.minReplicas, spec.maxReplicas], [2, 4]);
  assert.deepEqual(
    spec.metrics.map((m: any) => [m.resource.name, m.resource.target.averageUtilization]),
    [
      ['cpu', 60],
      ['memory', 75],
    ],
  );
  assert.deepEqual(spec.behavior, {
    scaleUp: { stabilizationWindowSeconds: 30 },
    scaleDown: { selectPolicy: 'Min', stabilizationWindowSeconds: 600, policies: [{ type: 'Pods', value: 1, periodSeconds: 180 }] },
  });
  assert.deepEqual(spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'igw' });
  assert.deepEqual(applyAutoscaler(once, c), once);
  assert.deepEqual((hpa.spec as Record<string, any>).minReplicas, 1, 'the input is not changed');
  assert.throws(() => applyAutoscaler(hpa, changesOf({})), /fixed replica count/);
});

test('GracefulGateway (cdk8s): an autoscaled spec gets an HPA and a Deployment without replicas, both valid', () => {
  const chart = testChart();
  const gw = new GracefulGateway(chart, 'gw', { spec: specInput({ spec: AUTOSCALED }) as GatewaySpecInput });
  const docs = Testing.synth(chart) as Array<Record<string, any>>;
  docs.forEach(validateK8s);
  assert.ok(gw.autoscaler);
  const hpa: Record<string, any> = docs.find((d) => d.kind === 'HorizontalPodAutoscaler')!;
  assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'igw' });
  assert.deepEqual([hpa.spec.minReplicas, hpa.spec.maxReplicas, hpa.spec.metrics[0].resource.target.averageUtilization], [2, 4, 60]);
  assert.deepEqual(hpa.spec.behavior, BEHAVIOR);
  assert.deepEqual(hpa.spec, autoscalerObject(gw.changes, 'igw')!.spec);
  assert.equal(docs.find((d) => d.kind === 'Deployment')!.spec.replicas, undefined);
  const fixed = testChart();
  new GracefulGateway(fixed, 'gw', { spec: specInput() as GatewaySpecInput });
  assert.ok(!(Testing.synth(fixed) as Array<Record<string, any>>).some((d) => d.kind === 'HorizontalPodAutoscaler'));
});

test('HcSidecar on an existing workload: with spec.autoscaling its replicas go', () => {
  const chart = testChart();
  const workload = new ApiObject(chart, 'dep', rendered());
  new HcSidecar(chart, 'hc', { changes: changesOf(AUTOSCALED), workload });
  const dep = (Testing.synth(chart) as Array<Record<string, any>>).find((d) => d.kind === 'Deployment')!;
  assert.equal(dep.spec.replicas, undefined);
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiObject, Testing } from 'cdk8s';
import { networkPolicyObject } from '../../../src/pod/extra-objects';
import { GracefulGateway, HcSidecar, HealthService, GatewayDisruptionBudget } from '../../../src/delivery/cdk8s/constructs';
import { podChanges } from '../../../src/pod';
import { planGateway } from '../../../src/plan/plan-gateway';
import type { GatewaySpecInput } from '../../../src/schema/gateway-spec';
import { resolved, specInput as rawSpecInput } from '../../support/spec-builder';
import { containerOf, validateK8s } from '../../emit/helpers';
import { testChart } from '../../support/cdk8s';

/** The spec builder's object, typed as the construct's input (it is validated there). */
const specInput = (o: Parameters<typeof rawSpecInput>[0] = {}) => rawSpecInput(o) as GatewaySpecInput;

describe('GracefulGateway', () => {
  it('synthesises a complete, valid gateway whose every field comes from the plan', () => {
    const chart = testChart();
    const gw = new GracefulGateway(chart, 'gw', { spec: specInput(), image: 'registry.corp/gracegate:9.9.9' });
    const docs = Testing.synth(chart) as Array<Record<string, any>>;
    assert.deepEqual(docs.map((d) => d.kind).sort(), [
      'ConfigMap',
      'Deployment',
      'NetworkPolicy',
      'PodDisruptionBudget',
      'Service',
      'Service',
      'ServiceAccount',
    ]);
    docs.forEach(validateK8s);
    assert.deepEqual(
      docs.find((d) => d.kind === 'NetworkPolicy'),
      networkPolicyObject(gw.changes),
      'the same NetworkPolicy every other path carries',
    );

    const deployment = docs.find((d) => d.kind === 'Deployment')!;
    const pod = deployment.spec.template.spec;
    assert.deepEqual(containerOf(deployment, 'gracegate-hc'), gw.changes.hcContainer);
    assert.equal(containerOf(deployment, 'gracegate-hc').image, 'registry.corp/gracegate:9.9.9');
    assert.deepEqual(containerOf(deployment, 'istio-proxy').lifecycle, { preStop: { httpGet: { path: '/wait-closed', port: 18182, scheme: 'HTTP' } } });
    assert.equal(containerOf(deployment, 'istio-proxy').image, 'auto');
    assert.equal(pod.terminationGracePeriodSeconds, gw.plan.timings.terminationGracePeriodSeconds);
    assert.deepEqual(deployment.spec.strategy.rollingUpdate, { maxSurge: gw.plan.rollout.maxSurge, maxUnavailable: gw.plan.rollout.maxUnavailable });
    assert.deepEqual(pod.affinity, gw.changes.affinity);
    assert.deepEqual(pod.volumes, gw.changes.volumes);
    // No cdk8s-plus defaults leaked in: no startup probe, no Always pull policy, no injected resources.
    assert.equal(JSON.stringify(docs).includes('startupProbe'), false);
    assert.equal(JSON.stringify(docs).includes('"Always"'), false);

    const health = docs.find((d) => d.kind === 'Service' && d.metadata.name === 'igw-gracegate-health')!;
    assert.equal(health.spec.externalTrafficPolicy, 'Local');
    assert.equal(health.spec.ports[0].nodePort, 30180);
    const gatewaySvc = docs.find((d) => d.kind === 'Service' && d.metadata.name === 'igw')!;
    assert.equal(gatewaySvc.spec.type, 'LoadBalancer');
    assert.deepEqual(gatewaySvc.spec.selector, gw.changes.selectorLabels);
  });

  it('fails synthesis on an error finding (the rollout deadlock), unless failOn none', () => {
    const deadlock = specInput({ spec: { replicas: 3, nodes: 3, rollout: { maxSurge: 1, maxUnavailable: 0 } } });
    const chart = testChart();
    new GracefulGateway(chart, 'gw', { spec: deadlock });
    assert.throws(() => Testing.synth(chart), /rollout-surge-deadlock/);
    const relaxed = testChart();
    new GracefulGateway(relaxed, 'gw', { spec: deadlock, failOn: 'none' });
    assert.doesNotThrow(() => Testing.synth(relaxed));
  });

  it('a bad spec throws in the constructor, naming the field', () => {
    assert.throws(() => new GracefulGateway(testChart(), 'gw', { spec: specInput({ spec: { replicas: 0 } }) }), /spec\.replicas/);
  });

  it('model nlb annotates the gateway Service for the AWS Load Balancer Controller', () => {
    const chart = testChart();
    new GracefulGateway(chart, 'gw', {
      spec: specInput({ spec: { loadBalancer: { model: 'nlb', targetType: 'ip', unhealthyConnectionTermination: false }, health: { exposure: 'clusterIP' } } }),
    });
    const svc = (Testing.synth(chart) as Array<Record<string, any>>).find((d) => d.kind === 'Service' && d.metadata.name === 'igw')!;
    assert.equal(svc.metadata.annotations['service.beta.kubernetes.io/aws-load-balancer-healthcheck-port'], '18180');
  });
});

describe('HcSidecar, HealthService, GatewayDisruptionBudget', () => {
  const r = resolved();
  const changes = podChanges(planGateway(r));

  it("HcSidecar adds the pod changes to a user's own Deployment and keeps its other fields", () => {
    const chart = testChart();
    const workload = new ApiObject(chart, 'mine', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'igw', namespace: 'istio-ingress' },
      spec: {
        selector: { matchLabels: changes.selectorLabels },
        template: {
          metadata: { labels: changes.selectorLabels, annotations: { team: 'edge' } },
          spec: { nodeSelector: { pool: 'edge' }, containers: [{ name: 'istio-proxy', image: 'auto', env: [{ name: 'A', value: '1' }] }] },
        },
      },
    });
    new HcSidecar(chart, 'hc', { changes, workload });
    const docs = Testing.synth(chart) as Array<Record<string, any>>;
    const d = docs.find((x) => x.kind === 'Deployment')!;
    validateK8s(d);
    assert.deepEqual(d.spec.template.spec.nodeSelector, { pool: 'edge' });
    assert.equal(d.spec.template.metadata.annotations.team, 'edge');
    assert.deepEqual(containerOf(d, 'istio-proxy').env, [{ name: 'A', value: '1' }]);
    assert.deepEqual(containerOf(d, 'istio-proxy').lifecycle, changes.proxy.lifecycle);
    assert.deepEqual(containerOf(d, 'gracegate-hc'), changes.hcContainer);
    assert.equal(d.spec.template.spec.terminationGracePeriodSeconds, changes.terminationGracePeriodSeconds);
    assert.ok(docs.some((x) => x.kind === 'ConfigMap' && x.metadata.name === changes.hcConfigMapName));
  });

  it('refuse to exist where the plan has no such object', () => {
    const hostPort = resolved({ spec: { replicas: 1, nodes: 2, health: { exposure: 'hostPort' } } });
    const c = podChanges(planGateway(hostPort));
    assert.throws(() => new HealthService(testChart(), 'h', { changes: c }), /hostPort/);
    assert.throws(() => new GatewayDisruptionBudget(testChart(), 'p', { changes: c }), /replicas/);
  });
});

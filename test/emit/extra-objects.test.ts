import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planGateway } from '../../src/plan/plan-gateway';
import { extraObjects, healthServiceObject, podChanges } from '../../src/pod';
import { resolved } from '../support/spec-builder';
import { allExamples } from './helpers';
import { validateK8s } from './helpers';

function changesFor(overrides: Parameters<typeof resolved>[0] = {}) {
  const r = resolved(overrides);
  return podChanges(planGateway(r));
}

describe('extra objects: valid Kubernetes objects, one per need', () => {
  for (const ex of allExamples()) {
    it(`${ex.file}: every object passes the Kubernetes schema`, () => {
      for (const obj of extraObjects(ex.changes)) validateK8s(obj);
    });
  }

  it("health Service for nodePort: NodePort, externalTrafficPolicy Local, the fixed nodePort, the sidecar's named port", () => {
    const svc = healthServiceObject(changesFor()) as Record<string, any>;
    assert.equal(svc.spec.type, 'NodePort');
    assert.equal(svc.spec.externalTrafficPolicy, 'Local');
    assert.equal(svc.spec.publishNotReadyAddresses, true);
    assert.deepEqual(svc.spec.ports, [{ name: 'hc-health', protocol: 'TCP', port: 18180, targetPort: 'hc-health', nodePort: 30180 }]);
    assert.deepEqual(svc.spec.selector, { app: 'igw', istio: 'igw' });
  });

  it('health Service without a fixed nodePort lets Kubernetes allocate one; clusterIP has no traffic policy', () => {
    const allocated = healthServiceObject(changesFor({ spec: { health: { exposure: 'nodePort' } } })) as Record<string, any>;
    assert.equal(allocated.spec.ports[0].nodePort, undefined);
    const cluster = healthServiceObject(
      changesFor({ spec: { health: { exposure: 'clusterIP' }, loadBalancer: { model: 'envoy', activeHealthCheck: { interval: '2s' } } } }),
    ) as Record<string, any>;
    assert.equal(cluster.spec.type, 'ClusterIP');
    assert.equal(cluster.spec.externalTrafficPolicy, undefined);
  });

  it('hostPort: ConfigMap, PDB and NetworkPolicy only; one replica: no PDB; networkPolicy.enabled false: no NetworkPolicy', () => {
    assert.deepEqual(
      extraObjects(changesFor({ spec: { replicas: 2, nodes: 2, health: { exposure: 'hostPort' } } })).map((o) => o.kind),
      ['ConfigMap', 'PodDisruptionBudget', 'NetworkPolicy'],
    );
    assert.deepEqual(
      extraObjects(changesFor({ spec: { replicas: 1 } })).map((o) => o.kind),
      ['ConfigMap', 'Service', 'NetworkPolicy'],
    );
    assert.deepEqual(
      extraObjects(changesFor({ spec: { replicas: 1, networkPolicy: { enabled: false } } })).map((o) => o.kind),
      ['ConfigMap', 'Service'],
    );
  });

  it('the ConfigMap holds the hc config as hc.json; the PDB follows the plan', () => {
    const changes = changesFor();
    const [cm, , pdb] = extraObjects(changes) as Array<Record<string, any>>;
    assert.deepEqual(JSON.parse(cm!.data['hc.json']), changes.hcConfig);
    assert.equal(cm!.metadata.name, changes.hcConfigMapName);
    assert.deepEqual(pdb!.spec, { maxUnavailable: 1, selector: { matchLabels: { app: 'igw', istio: 'igw' } }, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
  });
});

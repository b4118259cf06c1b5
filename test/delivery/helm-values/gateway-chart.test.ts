import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { valuesOverlayYaml } from '../../../src/delivery/helm-values/overlay';
import { applyPodChanges } from '../../../src/pod';
import { GATEWAY_CHART, HELMS, containerOf, example, helm, validateK8s, yamlDocs, type Example } from '../../emit/helpers';

/** The in-house chart of `charts/`, rendered by real helm with the generated overlay. */
const work = mkdtempSync(join(tmpdir(), 'gracegate-chart-test-'));
after(() => rmSync(work, { recursive: true, force: true }));

function render(binary: string, ex: Example, withOverlay: boolean): Array<Record<string, any>> {
  const args = ['template', ex.changes.gateway.name, GATEWAY_CHART, '--namespace', ex.changes.gateway.namespace];
  if (withOverlay) {
    const path = join(work, `${ex.file}.values.yaml`);
    writeFileSync(path, valuesOverlayYaml(ex.changes, { kind: 'additional-containers', version: '0.1.0' }));
    args.push('-f', path);
  }
  return yamlDocs(helm(binary, args));
}

const byKind = (docs: Array<Record<string, any>>, kind: string) => docs.find((d) => d.kind === kind)!;

for (const [label, binary] of Object.entries(HELMS)) {
  describe(`charts/gateway-additional-containers with the overlay, ${label}`, () => {
    it('passes helm lint', () => {
      helm(binary, ['lint', GATEWAY_CHART]);
    });

    for (const file of ['haproxy.yaml', 'nlb.yaml', 'haproxy-soft-drain.yaml']) {
      it(`${file}: the rendered Deployment carries every pod change, field by field`, () => {
        const ex = example(file);
        const docs = render(binary, ex, true);
        docs.forEach(validateK8s);
        const deployment = byKind(docs, 'Deployment');
        const pod = deployment.spec.template.spec;
        const { changes, plan } = ex;

        // The sidecar, with its ports, probes and preStop.
        const hc = containerOf(deployment, 'gracegate-hc');
        assert.deepEqual(hc, changes.hcContainer);
        const health = ex.resolved.spec.spec.health;
        assert.deepEqual(hc.ports, [
          {
            name: 'hc-health',
            containerPort: 18180,
            protocol: 'TCP',
            ...(health.exposure === 'hostPort' ? { hostPort: health.hostPort ?? health.port } : {}),
          },
          { name: 'hc-metrics', containerPort: 18183, protocol: 'TCP' },
        ]);
        assert.deepEqual(hc.readinessProbe.httpGet, { path: '/health', port: 'hc-health', scheme: 'HTTP' });
        assert.deepEqual(hc.livenessProbe.httpGet, { path: '/live', port: 'hc-health', scheme: 'HTTP' });
        assert.deepEqual(hc.lifecycle, { preStop: { httpGet: { path: '/hc-stopping', port: 18182, scheme: 'HTTP' } } });

        // The istio-proxy hold.
        assert.deepEqual(containerOf(deployment, 'istio-proxy').lifecycle, { preStop: { httpGet: { path: '/wait-closed', port: 18182, scheme: 'HTTP' } } });

        // Grace period, strategy, affinity and replicas equal to the plan.
        assert.equal(pod.terminationGracePeriodSeconds, plan.timings.terminationGracePeriodSeconds);
        assert.deepEqual(deployment.spec.strategy, {
          type: 'RollingUpdate',
          rollingUpdate: { maxSurge: plan.rollout.maxSurge, maxUnavailable: plan.rollout.maxUnavailable },
        });
        assert.deepEqual(pod.affinity, changes.affinity);
        assert.equal(deployment.spec.replicas, ex.resolved.spec.spec.replicas);
        assert.equal(deployment.spec.minReadySeconds, plan.timings.minReadySeconds);
        assert.deepEqual(pod.volumes, changes.volumes);
        for (const [k, v] of Object.entries(changes.podAnnotations)) assert.equal(deployment.spec.template.metadata.annotations[k], v);
        // The chart's own annotations survive the overlay (Helm merges maps).
        assert.equal(deployment.spec.template.metadata.annotations['inject.istio.io/templates'], 'gateway');
        // The selector the health Service, PDB and anti-affinity use is the chart's pod labels.
        assert.deepEqual(deployment.spec.selector.matchLabels, changes.selectorLabels);

        const service = byKind(docs, 'Service');
        assert.deepEqual(service.metadata.annotations ?? {}, changes.gatewayServiceAnnotations);
      });
    }

    it('the overlay and applyPodChanges (constructs, post-renderer) agree on every pod field', () => {
      const ex = example('haproxy.yaml');
      const plain = byKind(render(binary, ex, false), 'Deployment');
      const viaOverlay = byKind(render(binary, ex, true), 'Deployment');
      assert.deepEqual(applyPodChanges(plain as never, ex.changes), viaOverlay);
    });
  });
}

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse, parseAllDocuments } from 'yaml';
import { kustomizeComponent } from '../../src/delivery/kustomize/component';
import { manifestsYaml } from '../../src/delivery/manifests';
import { valuesOverlay, valuesOverlayYaml } from '../../src/delivery/helm-values/overlay';
import { planGateway } from '../../src/plan/plan-gateway';
import { applyPodChanges, podChanges } from '../../src/pod';
import { resolveGatewaySpec } from '../../src/schema/parse-spec';
import { specInput } from '../support/spec-builder';
import { allExamples } from '../emit/helpers';

/** The generated files explain themselves: every overlay key, the octal file mode, the Service's choices. */

test('the values overlay: a comment above every key, defaultMode in octal, the HPA switch explained; the values unchanged', () => {
  for (const ex of allExamples()) {
    const chart = ex.resolved.spec.spec.chart;
    if (chart.kind === 'gateway-api') continue; // no chart: gateway-parameters.yaml (test/emit/gateway-api*)
    if (chart.kind === 'istio-gateway' && chart.version.startsWith('1.26')) continue;
    const text = valuesOverlayYaml(ex.changes, chart);
    assert.deepEqual(parse(text), valuesOverlay(ex.changes, chart), `${ex.file}: comments change no value`);
    const lines = text.split('\n');
    lines.forEach((line, i) => {
      if (/^[A-Za-z]/.test(line)) assert.match(lines[i - 1]!, /^#/, `${ex.file}: '${line}' has a comment above it`);
    });
    assert.match(text, /defaultMode: 292 # 0444 in octal: read-only for owner, group and others/);
    if (chart.kind === 'istio-gateway' && ex.changes.autoscaler === null)
      assert.match(text, /# The chart's HPA off[^\n]*\n(#[^\n]*\n)*autoscaling:\n {2}enabled: false # istio\/gateway enables it by default/);
    if (ex.changes.autoscaler !== null)
      assert.match(
        text,
        /# The chart's HPA kept[^\n]*\n(#[^\n]*\n)*autoscaling:\n {2}enabled: true\n {2}minReplicas: \d+\n {2}maxReplicas: \d+/,
        `${ex.file}: the HPA kept with its range`,
      );
  }
});

test('manifests.yaml says why publishNotReadyAddresses and externalTrafficPolicy are set; the Kustomize patch gives the mode in octal', () => {
  const ex = allExamples().find((e) => e.file === 'haproxy.yaml')!;
  const text = manifestsYaml(ex.changes);
  assert.match(text, /# true: the LB must hear the sidecar itself at every moment[^]*\n {2}publishNotReadyAddresses: true/);
  assert.match(text, /# Local: a node answers the LB's probe with its own gateway pod[^\n]*\n {2}externalTrafficPolicy: Local/);
  assert.match(text, /# AlwaysAllow: [^\n]*\n {2}unhealthyPodEvictionPolicy: AlwaysAllow/);
  assert.match(
    text,
    /# Traffic from the pod's own node \(the kubelet's hooks and probes\) is always allowed[^]*# Witness port 18182: nobody but the node[^]*\n {2}ingress:/,
  );
  assert.equal(parseAllDocuments(text).filter((d) => d.contents !== null).length, 4);
  assert.match(kustomizeComponent(ex.changes)['deployment-patch.yaml']!, /defaultMode: 292 # 0444 in octal/);
});

test("spec.imagePullSecrets: into the pod by every path, merged by name with the chart's own", () => {
  const plan = planGateway(resolveGatewaySpec(specInput({ spec: { imagePullSecrets: ['corp-registry', 'ghcr-robot'] } })));
  const changes = podChanges(plan);
  assert.deepEqual(changes.imagePullSecrets, [{ name: 'corp-registry' }, { name: 'ghcr-robot' }]);
  assert.deepEqual(
    (valuesOverlay(changes, { kind: 'istio-gateway', version: '1.27.9' }) as Record<string, unknown>).imagePullSecrets,
    changes.imagePullSecrets,
  );
  const workload = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'igw' },
    spec: { template: { spec: { imagePullSecrets: [{ name: 'istio-pull' }, { name: 'ghcr-robot' }], containers: [{ name: 'istio-proxy' }] } } },
  };
  const applied = applyPodChanges(workload, changes) as any;
  assert.deepEqual(applied.spec.template.spec.imagePullSecrets, [{ name: 'istio-pull' }, { name: 'ghcr-robot' }, { name: 'corp-registry' }]);
  assert.deepEqual((parse(kustomizeComponent(changes)['deployment-patch.yaml']!) as any).spec.template.spec.imagePullSecrets, changes.imagePullSecrets);
  // None given: no key anywhere (the chart's own stays as it was).
  const none = podChanges(planGateway(resolveGatewaySpec(specInput())));
  assert.equal((valuesOverlay(none, { kind: 'istio-gateway', version: '1.27.9' }) as Record<string, unknown>).imagePullSecrets, undefined);
  assert.deepEqual((applyPodChanges(workload, none) as any).spec.template.spec.imagePullSecrets, [{ name: 'istio-pull' }, { name: 'ghcr-robot' }]);
  assert.throws(() => resolveGatewaySpec(specInput({ spec: { imagePullSecrets: ['Bad_Name'] } })), /must be a Secret name/);
});

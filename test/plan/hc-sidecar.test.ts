import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planGateway } from '../../src/plan/plan-gateway';
import { applyPodChanges, podChanges } from '../../src/pod';
import { resolveGatewaySpec } from '../../src/schema/parse-spec';
import { specInput } from '../support/spec-builder';

const planOf = (spec: Record<string, unknown>, health: Record<string, unknown> = {}) =>
  planGateway(
    resolveGatewaySpec(
      specInput({
        spec: { ...spec, health: { exposure: 'nodePort', port: 18180, nodePort: 30180, ...health } },
      }),
    ),
  );
const ids = (plan: ReturnType<typeof planOf>) => plan.findings.map((f) => f.id);

test('the hc sidecar kind: native from Kubernetes 1.33, ordinary before or when the version is not given, the override wins', () => {
  assert.deepEqual(
    [planOf({}).hcSidecar.kind, planOf({}).hcSidecar.reason],
    ['container', 'spec.kubernetesVersion not given: the ordinary container, which every Kubernetes runs'],
  );
  assert.equal(planOf({ kubernetesVersion: '1.33' }).hcSidecar.kind, 'native');
  assert.equal(planOf({ kubernetesVersion: 'v1.34.2' }).hcSidecar.kind, 'native');
  const v130 = planOf({ kubernetesVersion: '1.30' }).hcSidecar;
  assert.equal(v130.kind, 'container');
  assert.match(v130.reason, /GA only from 1\.33 \(on by default from 1\.29: choose them with spec\.health\.sidecar: native\)/);
  assert.equal(planOf({ kubernetesVersion: '1.33' }, { sidecar: 'container' }).hcSidecar.kind, 'container');
  assert.equal(planOf({ kubernetesVersion: '1.30' }, { sidecar: 'native' }).hcSidecar.kind, 'native');
});

test('a version YAML reads as a number is refused with the quoting hint', () => {
  assert.throws(() => resolveGatewaySpec(specInput({ spec: { kubernetesVersion: 1.3 } })), /quote it: YAML reads 1\.3 as a number/);
  assert.throws(() => resolveGatewaySpec(specInput({ spec: { kubernetesVersion: 'latest' } })), /must look like 1\.33/);
});

test('combinations that cannot work are findings with the fix', () => {
  const old = planOf({ kubernetesVersion: '1.28' }, { sidecar: 'native' });
  const f = old.findings.find((x) => x.id === 'native-sidecar-unsupported')!;
  assert.equal(f.severity, 'error');
  assert.match(f.message, /never exits, and the gateway pod never starts/);
  assert.deepEqual(f.fixes![0]!.edits, [{ path: ['spec', 'health', 'sidecar'], set: 'container' }]);
  const unknown = planOf({}, { sidecar: 'native' });
  assert.equal(unknown.findings.find((x) => x.id === 'native-sidecar-version-unknown')!.severity, 'warning');
  assert.ok(ids(planOf({ kubernetesVersion: '1.30' }, { sidecar: 'native' })).includes('native-sidecar-before-ga'));
  // None where it works.
  for (const p of [planOf({ kubernetesVersion: '1.33' }), planOf({}), planOf({ kubernetesVersion: '1.28' })]) {
    assert.deepEqual(
      ids(p).filter((id) => id.startsWith('native-')),
      [],
    );
  }
});

test('the timeline: an ordinary hc gets SIGTERM with the proxy, a native one only after Envoy exited', () => {
  const at = (plan: ReturnType<typeof planOf>, name: RegExp) => plan.timeline.entries.find((e) => name.test(e.name))!.atSeconds;
  const ordinary = planOf({});
  assert.equal(at(ordinary, /SIGTERM to the hc sidecar/), at(ordinary, /SIGTERM to the proxy/));
  const native = planOf({ kubernetesVersion: '1.33' });
  assert.equal(at(native, /SIGTERM to the hc sidecar \(native\)/), at(native, /Envoy exits/));
  assert.equal(at(native, /Envoy exits/) - at(native, /SIGTERM to the proxy/), native.timings.terminationDrainDurationSeconds);
  // The grace period covers the native hc's later stop: Envoy's exit plus the safety margin.
  assert.ok(native.timings.terminationGracePeriodSeconds >= at(native, /SIGTERM to the hc sidecar/) + 30);
});

test('pod changes: a native hc is an init container with restartPolicy Always and a startup probe; applying switches lists', () => {
  const native = podChanges(planOf({ kubernetesVersion: '1.33' }));
  assert.equal(native.hcPlacement, 'initContainers');
  assert.equal(native.hcContainer.restartPolicy, 'Always');
  assert.deepEqual(native.hcContainer.startupProbe?.httpGet, { path: '/live', port: 'hc-health', scheme: 'HTTP' });
  const ordinary = podChanges(planOf({}));
  assert.equal(ordinary.hcPlacement, 'containers');
  assert.equal(ordinary.hcContainer.restartPolicy, undefined);
  assert.equal(ordinary.hcContainer.startupProbe, undefined);
  // Everything else about the container is the same.
  const { restartPolicy: _r, startupProbe: _s, ...rest } = native.hcContainer;
  assert.deepEqual(rest, ordinary.hcContainer);

  const workload = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'igw' },
    spec: { template: { spec: { initContainers: [{ name: 'setup', image: 'busybox' }], containers: [{ name: 'istio-proxy', image: 'auto' }] } } },
  };
  const n = applyPodChanges(workload, native) as any;
  assert.deepEqual(
    n.spec.template.spec.initContainers.map((c: any) => c.name),
    ['setup', 'gracegate-hc'],
    "after the chart's own init containers",
  );
  assert.deepEqual(
    n.spec.template.spec.containers.map((c: any) => c.name),
    ['istio-proxy'],
  );
  assert.deepEqual(applyPodChanges(n, native), n, 'idempotent');
  const back = applyPodChanges(n, ordinary) as any;
  assert.deepEqual(
    back.spec.template.spec.initContainers.map((c: any) => c.name),
    ['setup'],
  );
  assert.deepEqual(
    back.spec.template.spec.containers.map((c: any) => c.name),
    ['istio-proxy', 'gracegate-hc'],
  );
  const forth = applyPodChanges(
    applyPodChanges({ ...workload, spec: { template: { spec: { containers: [{ name: 'istio-proxy' }] } } } }, ordinary),
    native,
  ) as any;
  assert.deepEqual(
    Object.keys(forth.spec.template.spec)
      .filter((k) => k.endsWith('ontainers'))
      .sort(),
    ['containers', 'initContainers'],
  );
  assert.deepEqual(
    forth.spec.template.spec.containers.map((c: any) => c.name),
    ['istio-proxy'],
  );
});

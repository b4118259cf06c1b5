import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hcConfigSchema } from '../../src/contract/hc-config';
import { planGateway } from '../../src/plan/plan-gateway';
import {
  HC_CONFIG_DIR,
  HC_CONFIG_PATH,
  HC_CONTAINER_NAME,
  HC_STATE_DIR,
  PATHS,
  PodChangesError,
  applyPodChanges,
  hcConfigHash,
  podChanges,
  type K8sObject,
} from '../../src/pod';
import { resolved } from '../support/spec-builder';
import { allExamples, example } from '../emit/helpers';

function changesFor(overrides: Parameters<typeof resolved>[0] = {}, image?: string) {
  const r = resolved(overrides);
  const plan = planGateway(r);
  return { plan, changes: podChanges(plan, image ? { image } : {}) };
}

describe('pod changes: a restart can never drain a healthy pod (contour#4851)', () => {
  for (const ex of allExamples()) {
    it(`${ex.file}: witness required, proxy hold on the hc witness port (in no Service), probes on their own paths`, () => {
      const { changes } = ex;
      const hc = changes.hcContainer;
      const healthPort = hc.ports.find((p) => p.name === 'hc-health')!;
      // The sidecar drains only when istio-proxy's preStop is waiting, which only a pod deletion causes.
      assert.equal(changes.hcConfig.terminationWitness?.required, true);
      // ... and that preStop really is the witness: /wait-closed on the witness port the sidecar serves,
      // which is not the health port the LB (the NodePort, the hostPort) reaches.
      assert.deepEqual(changes.proxy.lifecycle.preStop.httpGet, { path: '/wait-closed', port: changes.hcConfig.witnessPort, scheme: 'HTTP' });
      assert.notEqual(changes.hcConfig.witnessPort, healthPort.containerPort);
      assert.notEqual(changes.healthService?.port, changes.hcConfig.witnessPort);
      assert.equal(changes.hcConfig.healthPort, healthPort.containerPort);
      // Readiness never points at the LB's endpoint; liveness is /live (200 while draining).
      assert.equal(hc.readinessProbe.httpGet.path, '/health');
      assert.notEqual(hc.readinessProbe.httpGet.path, PATHS.lb);
      assert.equal(hc.livenessProbe.httpGet.path, '/live');
      assert.ok(hc.livenessProbe.failureThreshold * hc.livenessProbe.periodSeconds >= 60, 'liveness is generous');
      // The sidecar's own preStop is the (witness-guarded) drain, reading the same config.
      assert.deepEqual(hc.lifecycle.preStop, { httpGet: { path: '/hc-stopping', port: 18182, scheme: 'HTTP' } });
      // The control port is loopback only, the witness port the kubelet's: never a containerPort.
      assert.ok(!hc.ports.some((p) => p.containerPort === changes.hcConfig.controlPort || p.containerPort === changes.hcConfig.witnessPort));
      // The health port, and the read-only metrics port the PodMonitor scrapes.
      assert.deepEqual(
        hc.ports.map((p) => p.name),
        ['hc-health', 'hc-metrics'],
      );
    });
  }
});

describe('pod changes: the hc config', () => {
  for (const ex of allExamples()) {
    // Citrix -trofsCode without -trofsString maps to a 2xx-less soft signal {status: 299}, which
    // src/contract/hc-config.ts currently refuses without a body (reported to the lead; synth exits 2 for it).
    it(`${ex.file}: validates against the sidecar's own schema and carries the plan`, () => {
      const parsed = hcConfigSchema.safeParse(ex.changes.hcConfig);
      assert.ok(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues));
      const c = ex.changes.hcConfig;
      assert.equal(c.sequence, ex.plan.sequence);
      assert.equal(c.drainTimeoutSeconds, ex.plan.timings.drainTimeoutSeconds);
      assert.equal(c.lbBufferSeconds, ex.plan.timings.lbBufferSeconds);
      assert.equal(c.pollIntervalSeconds, ex.plan.timings.pollIntervalSeconds);
      assert.equal(c.envoyAdmin, `http://127.0.0.1:${ex.resolved.spec.spec.envoy.adminPort}`);
      assert.equal(c.stateFile?.startsWith(`${HC_STATE_DIR}/`), true);
    });
  }

  it('soft-drain carries the LB graceful signal; other sequences do not', () => {
    const soft = example('haproxy-soft-drain.yaml');
    assert.equal(soft.plan.sequence, 'soft-drain');
    assert.deepEqual(soft.changes.hcConfig.softSignal, { status: 404 });
    const f5 = changesFor({ spec: { loadBalancer: { model: 'f5', recvDisable: 'DISABLE-ME' } } });
    assert.deepEqual(f5.changes.hcConfig.softSignal, { status: 200, body: 'DISABLE-ME' });
    assert.equal(example('haproxy.yaml').changes.hcConfig.softSignal, undefined);
  });

  it('a changed plan changes the pod template (the hash annotation), an unchanged one does not', () => {
    const a = changesFor().changes;
    const b = changesFor({ spec: { traffic: { longRequestP99Seconds: 30 } } }).changes;
    assert.equal(a.podAnnotations['gracegate.dev/hc-config-hash'], hcConfigHash(a.hcConfig));
    assert.notEqual(a.podAnnotations['gracegate.dev/hc-config-hash'], b.podAnnotations['gracegate.dev/hc-config-hash']);
    assert.equal(a.podAnnotations['gracegate.dev/hc-config-hash'], changesFor().changes.podAnnotations['gracegate.dev/hc-config-hash']);
  });
});

describe('pod changes: timings, rollout and scheduling follow the plan', () => {
  it('grace period and Istio drain settings equal the plan; the stats matcher exposes the requests the sidecar counts', () => {
    const { plan, changes } = changesFor();
    assert.equal(changes.terminationGracePeriodSeconds, plan.timings.terminationGracePeriodSeconds);
    assert.deepEqual(JSON.parse(changes.podAnnotations['proxy.istio.io/config']!), {
      terminationDrainDuration: `${plan.timings.terminationDrainDurationSeconds}s`,
      drainDuration: `${plan.timings.drainDurationSeconds}s`,
      proxyStatsMatcher: { inclusionSuffixes: ['downstream_rq_active', 'downstream_cx_active', 'downstream_rq_5xx', 'downstream_cx_destroy_remote_active_rq'] },
    });
    // The proxy is held for the whole sequence, then drains and exits within the grace period.
    assert.ok(changes.terminationGracePeriodSeconds >= plan.timings.sequenceSeconds + plan.timings.terminationDrainDurationSeconds);
  });

  it('strategy and anti-affinity equal the plan; never the surge deadlock with one pod per node', () => {
    for (const [replicas, nodes] of [
      [2, 3],
      [3, 3],
      [4, 2],
    ] as const) {
      const { plan, changes } = changesFor({ spec: { replicas, nodes } });
      assert.deepEqual(changes.strategy, {
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: plan.rollout.maxSurge, maxUnavailable: plan.rollout.maxUnavailable },
      });
      const anti = changes.affinity?.podAntiAffinity as Record<string, any> | undefined;
      if (plan.rollout.antiAffinity === 'required') {
        assert.deepEqual(anti?.requiredDuringSchedulingIgnoredDuringExecution, [
          { labelSelector: { matchLabels: changes.selectorLabels }, topologyKey: 'kubernetes.io/hostname' },
        ]);
        // One pod per node and no spare node: maxUnavailable must not be 0 (kubernetes#116891).
        if (nodes <= replicas) assert.deepEqual(changes.strategy.rollingUpdate, { maxSurge: 0, maxUnavailable: 1 });
      } else {
        assert.equal(anti?.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.podAffinityTerm.topologyKey, 'kubernetes.io/hostname');
      }
    }
    assert.equal(changesFor({ spec: { rollout: { antiAffinity: 'none' } } }).changes.affinity, null);
  });

  it('hostPort exposure puts a hostPort on the health port and needs no Service', () => {
    const { changes } = changesFor({ spec: { replicas: 2, nodes: 2, health: { exposure: 'hostPort', port: 18180, hostPort: 8081 } } });
    assert.deepEqual(changes.hcContainer.ports, [
      { name: 'hc-health', containerPort: 18180, protocol: 'TCP', hostPort: 8081 },
      { name: 'hc-metrics', containerPort: 18183, protocol: 'TCP' },
    ]);
    assert.equal(changes.healthService, null);
  });

  it('PDB follows the plan: maxUnavailable 1, none for one replica', () => {
    assert.deepEqual(changesFor().changes.disruptionBudget, { name: 'igw-gracegate', maxUnavailable: 1 });
    assert.equal(changesFor({ spec: { replicas: 1 } }).changes.disruptionBudget, null);
  });
});

describe('pod changes: the sidecar container is set on purpose', () => {
  it('non-root, read-only, no privilege, explicit resources, IfNotPresent, state in an emptyDir', () => {
    const { changes } = changesFor({}, 'registry.corp/gracegate:1.2.3');
    const hc = changes.hcContainer;
    assert.equal(hc.name, HC_CONTAINER_NAME);
    assert.equal(hc.image, 'registry.corp/gracegate:1.2.3');
    assert.equal(hc.imagePullPolicy, 'IfNotPresent');
    assert.deepEqual(hc.command, ['gracegate', 'hc', '--config', HC_CONFIG_PATH]);
    assert.deepEqual(hc.securityContext, {
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(hc.resources, { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '160Mi' } });
    assert.equal(Object.hasOwn(hc, 'startupProbe'), false);
    // Every mount has its volume; the config comes from the ConfigMap, the state from an emptyDir.
    const volumes = new Map(changes.volumes.map((v) => [v.name, v]));
    for (const m of hc.volumeMounts) assert.ok(volumes.has(m.name), `volume ${m.name}`);
    const config = hc.volumeMounts.find((m) => m.mountPath === HC_CONFIG_DIR)!;
    assert.equal(config.readOnly, true);
    assert.deepEqual((volumes.get(config.name) as { configMap: { name: string } }).configMap.name, changes.hcConfigMapName);
    const state = hc.volumeMounts.find((m) => m.mountPath === HC_STATE_DIR)!;
    assert.ok('emptyDir' in volumes.get(state.name)!);
  });

  it('the default image follows the package version', () => {
    assert.match(changesFor().changes.hcContainer.image, /^ghcr\.io\/gracegate\/gracegate:\d+\.\d+\.\d+/);
  });

  it('refuses a gateway name too long for the derived object names', () => {
    const r = resolved({ metadata: { name: 'a'.repeat(50) } });
    assert.throws(() => podChanges(planGateway(r)), PodChangesError);
  });
});

it("applyPodChanges: a pod's own sidecar.istio.io/statsInclusionSuffixes (which Istio uses instead of proxyStatsMatcher) gets the sidecar's suffixes appended, once", () => {
  const changes = podChanges(
    planGateway(resolved({ spec: { traffic: { longRequestP99Seconds: 20, longLived: { kinds: ['websocket'], clientsReconnect: true } } } })),
  );
  const deployment = (annotations: Record<string, string>): K8sObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'igw', namespace: 'istio-ingress' },
    spec: {
      selector: { matchLabels: { app: 'igw' } },
      template: { metadata: { labels: { app: 'igw' }, annotations }, spec: { containers: [{ name: 'istio-proxy', image: 'auto' }] } },
    },
  });
  const annotationsOf = (o: K8sObject) => (o as any).spec.template.metadata.annotations as Record<string, string>;
  const key = 'sidecar.istio.io/statsInclusionSuffixes';
  const once = applyPodChanges(deployment({ [key]: 'upstream_rq_retry, downstream_rq_active' }), changes);
  assert.deepEqual(
    annotationsOf(once)[key]!.split(','),
    ['upstream_rq_retry', ...changes.statsInclusionSuffixes],
    "the pod's own first, then each missing one",
  );
  assert.deepEqual(applyPodChanges(once, changes), once, 'twice = once');
  assert.equal(annotationsOf(applyPodChanges(deployment({}), changes))[key], undefined, 'no annotation: none added (proxyStatsMatcher applies)');
});

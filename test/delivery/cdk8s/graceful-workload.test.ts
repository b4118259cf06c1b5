import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiObject, Chart, JsonPatch, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { GracefulWorkload } from '../../../src/delivery/cdk8s/graceful-workload';
import { applyWorkloadChanges } from '../../../src/pod/workload/apply';
import type { K8sObject } from '../../../src/pod/k8s';
import { workloadInput } from '../../support/workload-spec-builder';
import { testChart } from '../../support/cdk8s';

type Obj = Record<string, any>;

function chart(): Chart {
  return testChart({ namespace: 'graceful-test' });
}

function deployment(scope: Chart, props: Partial<kplus.DeploymentProps> = {}): kplus.Deployment {
  return new kplus.Deployment(scope, 'demo', {
    metadata: { name: 'demo' },
    containers: [
      {
        name: 'app',
        image: 'registry.example.com/demo:1.0',
        portNumber: 8080,
        args: ['--listen=:8080'],
        lifecycle: { postStart: kplus.Handler.fromCommand(['/bin/true']) },
      },
    ],
    ...props,
  });
}

function synth(c: Chart, kind: string): Obj {
  const o = Testing.synth(c).find((x) => x.kind === kind);
  assert.ok(o, `a ${kind} in the output`);
  return o;
}

/**
 * Every field gracegate sets is in the synthesised object: applying the workload changes again
 * (the one implementation post-render uses) finds nothing to change. The anti-affinity is the one
 * field cdk8s-plus writes in its own words (it adds `namespaces`), so it is compared apart.
 */
function assertEveryPlannedField(object: Obj, g: GracefulWorkload): void {
  const { affinity: _affinity, ...rest } = g.changes;
  const reapplied = applyWorkloadChanges(object as K8sObject, { ...rest, affinity: null });
  assert.deepEqual(reapplied, object, 'a planned field is missing or different in the synthesised YAML');
}

test('the premise (cdk8s-team/cdk8s#2172): on a cdk8s-plus-28 Deployment a patched preStop.sleep comes out empty, and so does a plain-number strategy', () => {
  const c = chart();
  const d = deployment(c);
  ApiObject.of(d).addJsonPatch(
    JsonPatch.add('/spec/template/spec/containers/0/lifecycle/preStop', { sleep: { seconds: 5 } }),
    JsonPatch.replace('/spec/strategy', { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }),
    JsonPatch.add('/spec/template/spec/terminationGracePeriodSeconds', 50),
  );
  const out = synth(c, 'Deployment');
  assert.deepEqual(out.spec.template.spec.containers[0].lifecycle.preStop, {}, 'sleep is not in the 1.28 schema: dropped');
  assert.deepEqual(out.spec.strategy.rollingUpdate, {}, 'IntOrString fields drop plain numbers');
  assert.equal(out.spec.template.spec.terminationGracePeriodSeconds, 50, 'a plain field survives its patch');
});

test('GracefulWorkload.of: every planned field is in the synthesised Deployment (sleep preStop, env timeout)', () => {
  const c = chart();
  const d = deployment(c);
  const g = GracefulWorkload.of(d, workloadInput());
  const out = synth(c, 'Deployment');
  const app = out.spec.template.spec.containers[0];
  assert.deepEqual(app.lifecycle, { postStart: { exec: { command: ['/bin/true'] } }, preStop: { sleep: { seconds: 5 } } });
  assert.deepEqual(app.env, [{ name: 'SHUTDOWN_TIMEOUT_SEC', value: '40' }]);
  assert.equal(out.spec.template.spec.terminationGracePeriodSeconds, 50);
  assert.deepEqual(out.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
  assert.equal(out.spec.replicas, 2);
  assertEveryPlannedField(out, g);
  const pdb = synth(c, 'PodDisruptionBudget');
  assert.deepEqual(pdb.spec.selector.matchLabels, out.spec.selector.matchLabels, "the PDB selects cdk8s-plus's own pod labels");
  assert.equal(pdb.metadata.name, 'demo-gracegate');
  assert.deepEqual(Testing.synth(c), Testing.synth(c), 'synthesising twice gives the same output');
});

test('GracefulWorkload.of: exec sleep, a flag in args and required anti-affinity (through scheduling.spread) on Kubernetes 1.29', () => {
  const c = chart();
  const d = deployment(c);
  const g = GracefulWorkload.of(
    d,
    workloadInput({
      kubernetesVersion: '1.29',
      image: { distroless: false },
      nodes: 3,
      rollout: { antiAffinity: 'required' },
      app: { gracefulShutdown: true, shutdownTimeout: { via: 'flag', name: '--shutdown-timeout', format: 'duration' } },
    }),
  );
  const out = synth(c, 'Deployment');
  const app = out.spec.template.spec.containers[0];
  assert.deepEqual(app.lifecycle.preStop, { exec: { command: ['sleep', '5'] } });
  assert.deepEqual(app.args, ['--listen=:8080', '--shutdown-timeout=40s']);
  assert.equal(app.env, undefined);
  const term = out.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0];
  assert.equal(term.topologyKey, 'kubernetes.io/hostname');
  assert.deepEqual(term.labelSelector.matchLabels, out.spec.selector.matchLabels);
  assertEveryPlannedField(out, g);
});

test('GracefulWorkload.of on a StatefulSet, and with no preStop at all', () => {
  const c = chart();
  const set = new kplus.StatefulSet(c, 'db', {
    metadata: { name: 'db' },
    service: new kplus.Service(c, 'db-svc', { ports: [{ port: 5432 }] }),
    containers: [{ name: 'db', image: 'postgres:16', portNumber: 5432 }],
  });
  const g = GracefulWorkload.of(set, workloadInput({ workload: { kind: 'StatefulSet' }, termination: { preStopSeconds: 0 } }, { name: 'db' }));
  const out = synth(c, 'StatefulSet');
  assert.equal(out.spec.template.spec.containers[0].lifecycle, undefined);
  assert.equal(out.spec.template.spec.terminationGracePeriodSeconds, 45);
  assertEveryPlannedField(out, g);
});

test('a spec that does not name the workload, or a plan with an error finding, fails synthesis with the reason', () => {
  const c = chart();
  GracefulWorkload.of(deployment(c), workloadInput({}, { name: 'api' }));
  assert.throws(() => Testing.synth(c), /metadata\.name 'api' is not the workload's name 'demo'/);
  const c2 = chart();
  GracefulWorkload.of(deployment(c2), workloadInput({ kubernetesVersion: '1.28', image: { distroless: true } }));
  assert.throws(() => Testing.synth(c2), /error prestop-exec-distroless/);
  const c3 = chart();
  GracefulWorkload.of(deployment(c3), workloadInput({ kubernetesVersion: '1.28', image: { distroless: true } }), { failOn: 'none' });
  assert.doesNotThrow(() => Testing.synth(c3));
  assert.throws(() => GracefulWorkload.of(deployment(chart()), workloadInput({ replicas: 'two' })), /spec\.replicas/);
});

/** Every leaf (JSON pointer-like key path) of `o` whose value is not the same leaf of `before`. */
function changedLeaves(after: unknown, before: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (after === null || typeof after !== 'object') return after === before ? [] : [path];
  const b = before !== null && typeof before === 'object' ? (before as Obj) : {};
  return Object.entries(after as Obj).flatMap(([k, v]) => {
    const key = Array.isArray(after) ? Number(k) : k;
    return changedLeaves(v, b[k], [...path, key]);
  });
}

function without(o: Obj, path: (string | number)[]): Obj {
  const out = structuredClone(o);
  let at: any = out;
  for (const k of path.slice(0, -1)) at = at[k];
  const last = path[path.length - 1]!;
  if (Array.isArray(at)) at.splice(Number(last), 1);
  else delete at[last];
  return out;
}

test('a dropped field fails the check: each field GracefulWorkload.of changed, removed from the synthesised YAML, is caught', () => {
  const cases: [Record<string, unknown>, string[]][] = [
    // sleep preStop (edit after serialisation), env timeout (typed API), grace and strategy (patches)
    [
      { replicas: 3 },
      [
        'spec.replicas',
        'spec.strategy.rollingUpdate.maxSurge',
        'spec.strategy.rollingUpdate.maxUnavailable',
        'spec.template.spec.terminationGracePeriodSeconds',
        'spec.template.spec.containers.0.env.0.name',
        'spec.template.spec.containers.0.env.0.value',
        'spec.template.spec.containers.0.lifecycle.preStop.sleep.seconds',
      ],
    ],
    // exec preStop, the flag in args (a patch)
    [
      {
        kubernetesVersion: '1.29',
        image: { distroless: false },
        app: { gracefulShutdown: true, shutdownTimeout: { via: 'flag', name: '--shutdown-timeout', format: 'duration' } },
      },
      [
        'spec.template.spec.containers.0.args.1',
        'spec.template.spec.containers.0.lifecycle.preStop.exec.command.0',
        'spec.template.spec.containers.0.lifecycle.preStop.exec.command.1',
      ],
    ],
  ];
  for (const [spec, expected] of cases) {
    const plain = chart();
    deployment(plain);
    const before = synth(plain, 'Deployment');
    const c = chart();
    const g = GracefulWorkload.of(deployment(c), workloadInput(spec));
    const after = synth(c, 'Deployment');
    // The affinity is compared apart (cdk8s-plus's own words), and these plans ask for none.
    const changed = changedLeaves(after, before).filter((p) => !p.includes('affinity'));
    const names = changed.map((p) => p.join('.'));
    for (const name of expected) assert.ok(names.includes(name), `${name} is among the changed fields: ${names.join(', ')}`);
    assertEveryPlannedField(after, g);
    for (const path of changed) {
      assert.throws(() => assertEveryPlannedField(without(after, path), g), /a planned field is missing or different/, `dropping ${path.join('.')} is caught`);
    }
  }
});

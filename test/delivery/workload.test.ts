import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { planWorkload } from '../../src/plan/workload/plan-workload';
import { applyWorkloadChanges } from '../../src/pod/workload/apply';
import type { K8sObject } from '../../src/pod/k8s';
import { withFlag, workloadChanges } from '../../src/pod/workload/pod-changes';
import { requireTool, run, tempDir, TOOLS } from './tools';
import { validateK8s } from '../emit/helpers';
import { runCli } from '../support/run-cli';
import { REPO_ROOT } from '../support/repo';
import { resolvedWorkload, specFile, workloadInput } from '../support/workload-spec-builder';

type Obj = Record<string, any>;
const tmp = tempDir('gracegate-workload-delivery-');

function docs(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter((o) => o !== null);
}

/** A chart's output for the app: a comment, a ConfigMap, the Service and the Deployment (app + a log shipper). */
const RENDERED = `# Source: demo/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo-config   # kept byte for byte
  namespace: graceful-test
data: {LOG_LEVEL: info}
---
# Source: demo/templates/service.yaml
apiVersion: v1
kind: Service
metadata: {name: demo, namespace: graceful-test}
spec:
  selector: {app: demo}
  ports: [{port: 80, targetPort: 8080}]
---
# Source: demo/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: demo
  namespace: graceful-test
spec:
  replicas: 3
  selector:
    matchLabels: {app: demo}
  template:
    metadata:
      labels: {app: demo}
    spec:
      containers:
      - name: app
        image: registry.example.com/demo:1.0
        args: ["--listen=:8080", "--shutdown-timeout", "10s"]
        env:
        - {name: LOG_FORMAT, value: json}
        - {name: SHUTDOWN_TIMEOUT_SEC, value: "10"}
        lifecycle:
          postStart: {exec: {command: [/bin/true]}}
          preStop: {exec: {command: [sleep, "15"]}}
        readinessProbe: {httpGet: {path: /health, port: 8080}}
      - name: log-shipper
        image: registry.example.com/shipper:2
`;

const SPEC = specFile('demo.yaml', JSON.stringify(workloadInput({ workload: { container: 'app' } })));

function postRender(spec: string, input: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  return runCli(['post-render', '--spec', spec, ...args], { input, env });
}

test('applyWorkloadChanges: preStop replaced whole, postStart kept, env and flag set in place, twice = once', () => {
  const plan = planWorkload(
    resolvedWorkload({
      workload: { container: 'app' },
      app: { gracefulShutdown: true, shutdownTimeout: { via: 'flag', name: '--shutdown-timeout', format: 'duration' } },
    }),
  );
  const changes = workloadChanges(plan);
  const deployment = docs(RENDERED)[2] as K8sObject;
  const once = applyWorkloadChanges(deployment, changes);
  const app = (once.spec as Obj).template.spec.containers[0];
  assert.deepEqual(app.lifecycle, { postStart: { exec: { command: ['/bin/true'] } }, preStop: { sleep: { seconds: 5 } } });
  assert.deepEqual(app.args, ['--listen=:8080', '--shutdown-timeout=40s']);
  assert.deepEqual(applyWorkloadChanges(once, changes), once);
  assert.deepEqual((once.spec as Obj).template.spec.containers[1], (deployment.spec as Obj).template.spec.containers[1], 'the other container is untouched');
  assert.deepEqual(withFlag(['--a', '--shutdown-timeout=1s'], { name: '--shutdown-timeout', value: '4s' }), ['--a', '--shutdown-timeout=4s']);
  assert.deepEqual(withFlag([], { name: '-t', value: '4' }), ['-t=4']);
  // Two containers and none named: which one is the app's is not guessed.
  const unnamed = workloadChanges(planWorkload(resolvedWorkload()));
  assert.throws(
    () => applyWorkloadChanges(deployment, unnamed),
    /Deployment\/demo has 2 containers \(app, log-shipper\): name the app's in spec\.workload\.container/,
  );
  assert.throws(
    () => applyWorkloadChanges(deployment, { ...unnamed, container: 'api' }),
    /has no container 'api' \(spec\.workload\.container\); it has app, log-shipper/,
  );
});

const once = postRender(SPEC, RENDERED);

test('post-render puts the plan into the named Deployment, appends its PDB and leaves every other document byte for byte', () => {
  assert.equal(once.status, 0, once.stderr);
  const out = docs(once.stdout);
  const dep = out.find((o) => o.kind === 'Deployment')!;
  const pod = dep.spec.template.spec;
  const app = pod.containers[0];
  assert.equal(dep.spec.replicas, 2);
  assert.deepEqual(dep.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
  assert.equal(pod.terminationGracePeriodSeconds, 50);
  assert.deepEqual(app.lifecycle.preStop, { sleep: { seconds: 5 } });
  assert.deepEqual(app.env, [
    { name: 'LOG_FORMAT', value: 'json' },
    { name: 'SHUTDOWN_TIMEOUT_SEC', value: '40' },
  ]);
  const pdb = out.find((o) => o.kind === 'PodDisruptionBudget')!;
  assert.deepEqual(pdb.spec, { maxUnavailable: 1, selector: { matchLabels: { app: 'demo' } }, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
  for (const o of out) validateK8s(o);
  const [configMap, service] = RENDERED.split(/^---\n/m);
  assert.ok(once.stdout.startsWith(`${configMap}---\n${service}---\n`), 'documents before the target are the input, byte for byte');
  const again = postRender(SPEC, once.stdout);
  assert.equal(again.status, 0, again.stderr);
  assert.equal(again.stdout, once.stdout, 'a second pass changes nothing');
});

test('post-render loads no cdk8s, finds a StatefulSet, and refuses what would not fit with the field to change', () => {
  const light = postRender(SPEC, RENDERED, [], { NODE_OPTIONS: `--require ${join(REPO_ROOT, 'test/support/forbid-cdk8s.js')}` });
  assert.equal(light.status, 0, light.stderr);
  const sts = specFile('sts.yaml', JSON.stringify(workloadInput({ workload: { kind: 'StatefulSet', container: 'app' } })));
  const stsOut = postRender(sts, RENDERED.replace('kind: Deployment', 'kind: StatefulSet'));
  assert.equal(stsOut.status, 0, stsOut.stderr);
  const set = docs(stsOut.stdout).find((o) => o.kind === 'StatefulSet')!;
  assert.equal(set.spec.strategy, undefined, 'a StatefulSet gets no Deployment strategy');
  assert.deepEqual(set.spec.template.spec.containers[0].lifecycle.preStop, { sleep: { seconds: 5 } });
  const wrongLabels = postRender(SPEC, RENDERED.replace('labels: {app: demo}', 'labels: {app: other}'));
  assert.equal(wrongLabels.status, 2);
  assert.match(
    wrongLabels.stderr,
    /Deployment\/graceful-test\/demo: its pod labels lack app=demo, which the PodDisruptionBudget and anti-affinity select; set spec\.workload\.selectorLabels/,
  );
  assert.equal(wrongLabels.stdout, '');
  const noTarget = postRender(
    SPEC,
    RENDERED.replace('name: demo\n  namespace: graceful-test\nspec:\n  replicas', 'name: other\n  namespace: graceful-test\nspec:\n  replicas'),
  );
  assert.equal(noTarget.status, 2);
  assert.match(noTarget.stderr, /no Deployment matches --target-name demo; the input has these Deployments: Deployment\/graceful-test\/other/);
});

test('the Kustomize component and post-render make the same Deployment (real kubectl kustomize)', () => {
  const out = join(tmp, 'synth');
  const r = runCli(['synth', SPEC, '--out', out, '--kustomize']);
  assert.equal(r.status, 0, r.stderr);
  for (const f of ['manifests.yaml', 'plan.json', 'PLAN.md', 'kustomize/kustomization.yaml', 'kustomize/workload-patch.yaml', 'kustomize/objects.yaml'])
    assert.ok(existsSync(join(out, f)), f);
  assert.equal(JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8')).kind, 'GracefulWorkloadPlan');
  docs(readFileSync(join(out, 'manifests.yaml'), 'utf8')).forEach(validateK8s);
  const root = join(tmp, 'kustomization');
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'all.yaml'), RENDERED);
  cpSync(join(out, 'kustomize'), join(root, 'gracegate'), { recursive: true });
  writeFileSync(join(root, 'kustomization.yaml'), 'resources: [all.yaml]\ncomponents: [gracegate]\n');
  const k = run(requireTool(TOOLS.kubectl), ['kustomize', root]);
  assert.equal(k.status, 0, k.stderr);
  const byKind = (text: string, kind: string) => docs(text).filter((o) => o.kind === kind);
  // Strategic merge puts merged env entries first; order aside, the two must be the same object.
  const normal = (d: Obj) => {
    const c = structuredClone(d);
    for (const ct of c.spec.template.spec.containers) ct.env?.sort((a: Obj, b: Obj) => a.name.localeCompare(b.name));
    return c;
  };
  assert.deepEqual(normal(byKind(k.stdout, 'Deployment')[0]!), normal(byKind(once.stdout, 'Deployment')[0]!));
  assert.deepEqual(byKind(k.stdout, 'PodDisruptionBudget'), byKind(once.stdout, 'PodDisruptionBudget'));
});

test('synth refuses a Kustomize component it cannot make, naming the field, and writes nothing', () => {
  const flag = specFile(
    'flag.yaml',
    JSON.stringify(
      workloadInput({ workload: { container: 'app' }, app: { gracefulShutdown: true, shutdownTimeout: { via: 'flag', name: '--shutdown-timeout' } } }),
    ),
  );
  const r = runCli(['synth', flag, '--out', join(tmp, 'flag'), '--kustomize']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /flag\.yaml: spec\.app\.shutdownTimeout: a flag \(--shutdown-timeout\) cannot go into args by a static patch/);
  assert.ok(!existsSync(join(tmp, 'flag')));
  const unnamed = specFile('unnamed.yaml', JSON.stringify(workloadInput()));
  const u = runCli(['synth', unnamed, '--out', join(tmp, 'unnamed'), '--kustomize']);
  assert.equal(u.status, 2);
  assert.match(u.stderr, /spec\.workload\.container: required for the Kustomize component/);
  const blocked = specFile('blocked.yaml', JSON.stringify(workloadInput({ kubernetesVersion: '1.28', image: { distroless: true } })));
  const b = runCli(['synth', blocked, '--out', join(tmp, 'blocked')]);
  assert.equal(b.status, 1);
  assert.match(b.stderr, /error prestop-exec-distroless/);
  assert.ok(!existsSync(join(tmp, 'blocked')));
});

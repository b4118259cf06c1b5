import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT, runCli } from '../../support/run-cli';
import { tempDir } from '../tools';

const SPEC = 'examples/haproxy.yaml';
const RENDERED = readFileSync(join(REPO_ROOT, 'test/delivery/post-render/fixtures/rendered-1.26-like.yaml'), 'utf8');
const tmp = tempDir('gracegate-post-render-');

type Obj = Record<string, any>;

function docs(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter((o) => o !== null);
}

/** The documents' source texts, split on `---` lines (for byte comparisons of untouched ones). */
function pieces(text: string): string[] {
  return text.split(/^---\n/m).filter((p) => p.trim() !== '');
}

function find(objects: Obj[], kind: string, name: string): Obj {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(o, `${kind}/${name} in the output`);
  return o;
}

function postRender(args: string[], input: string, env: NodeJS.ProcessEnv = {}) {
  return runCli(['post-render', '--spec', SPEC, ...args], { input, env });
}

const once = postRender([], RENDERED);

test('injects the pod changes into the gateway Deployment', () => {
  assert.equal(once.status, 0, once.stderr);
  const plan = JSON.parse(runCli(['plan', SPEC, '--format', 'json']).stdout);
  const out = docs(once.stdout);
  const dep = find(out, 'Deployment', 'igw-public');
  const pod = dep.spec.template.spec;
  assert.equal(pod.terminationGracePeriodSeconds, plan.timings.terminationGracePeriodSeconds);
  assert.deepEqual(dep.spec.strategy, {
    type: 'RollingUpdate',
    rollingUpdate: { maxSurge: plan.rollout.maxSurge, maxUnavailable: plan.rollout.maxUnavailable },
  });
  assert.equal(dep.spec.replicas, 2);
  assert.equal(dep.spec.minReadySeconds, plan.timings.minReadySeconds);
  assert.deepEqual(
    pod.containers.map((c: Obj) => c.name),
    ['istio-proxy', 'gracegate-hc'],
  );
  const [proxy, hc] = pod.containers;
  // The hold: the proxy's preStop waits on the sidecar's witness port; the rest of the proxy stays.
  assert.deepEqual(proxy.lifecycle, { preStop: { httpGet: { path: '/wait-closed', port: 18182, scheme: 'HTTP' } } });
  assert.equal(proxy.image, 'auto');
  assert.deepEqual(proxy.ports, [{ containerPort: 15090, protocol: 'TCP', name: 'http-envoy-prom' }]);
  assert.equal(hc.readinessProbe.httpGet.path, '/health');
  assert.equal(hc.livenessProbe.httpGet.path, '/live');
  assert.deepEqual(hc.ports, [
    { name: 'hc-health', containerPort: 18180, protocol: 'TCP' },
    { name: 'hc-metrics', containerPort: 18183, protocol: 'TCP' },
  ]);
  assert.deepEqual(
    pod.volumes.map((v: Obj) => v.name),
    ['gracegate-hc-config', 'gracegate-state'],
  );
  assert.equal(pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey, 'kubernetes.io/hostname');
  const annotations = dep.spec.template.metadata.annotations;
  assert.deepEqual(JSON.parse(annotations['proxy.istio.io/config']), {
    terminationDrainDuration: '5s',
    drainDuration: '45s',
    proxyStatsMatcher: { inclusionSuffixes: ['downstream_rq_active', 'downstream_cx_active', 'downstream_rq_5xx', 'downstream_cx_destroy_remote_active_rq'] },
  });
  assert.match(annotations['gracegate.dev/hc-config-hash'], /^[0-9a-f]{16}$/);
  assert.equal(annotations['sidecar.istio.io/inject'], 'true', "the chart's own pod annotations stay");
});

test("appends the health Service, PDB, hc ConfigMap and the NetworkPolicy over the sidecar's ports", () => {
  const out = docs(once.stdout);
  const svc = find(out, 'Service', 'igw-public-gracegate-health');
  assert.equal(svc.spec.type, 'NodePort');
  assert.equal(svc.spec.externalTrafficPolicy, 'Local');
  assert.equal(svc.spec.ports[0].nodePort, 30180);
  assert.deepEqual(svc.spec.selector, { app: 'igw-public', istio: 'igw-public' });
  assert.equal(find(out, 'PodDisruptionBudget', 'igw-public-gracegate').spec.maxUnavailable, 1);
  const hc = JSON.parse(find(out, 'ConfigMap', 'igw-public-gracegate-hc').data['hc.json']);
  assert.equal(hc.sequence, 'drain-first');
  assert.equal(find(out, 'NetworkPolicy', 'igw-public-gracegate-hc-ports').spec.podSelector.matchLabels.app, 'igw-public');
  assert.equal(out.length, docs(RENDERED).length + 4);
});

test("the gateway's own LoadBalancer Service gets externalTrafficPolicy Local, nothing else of it changes", () => {
  const before = find(docs(RENDERED), 'Service', 'igw-public');
  const after = find(docs(once.stdout), 'Service', 'igw-public');
  assert.notEqual(before.spec.externalTrafficPolicy, 'Local');
  assert.deepEqual(after, { ...before, spec: { ...before.spec, externalTrafficPolicy: 'Local' } });
});

test('untouched objects come out byte for byte, in order, comments included', () => {
  const input = pieces(RENDERED);
  const output = pieces(once.stdout);
  // The gateway's Deployment and its LoadBalancer Service (externalTrafficPolicy Local) are the edited ones.
  const touched = (p: string) => /^kind: (Deployment|Service)$/m.test(p) && /name: igw-public$/m.test(p) && !/helm.sh\/hook/.test(p);
  const kept = input.filter((p) => !touched(p));
  assert.deepEqual(
    output.filter((p) => kept.includes(p)),
    kept,
  );
  assert.match(once.stdout, /# Lets the gateway read the TLS secrets/);
  // The edited Deployment keeps its comments too, where the YAML library can.
  const dep = output.find((p) => touched(p) && /^kind: Deployment$/m.test(p))!;
  assert.match(dep, /# Source: gateway\/templates\/deployment.yaml/);
  assert.match(dep, /# "auto" is replaced by the injection webhook/);
  assert.match(dep, /# Binding to 80\/443 without privileges/);
});

test('a hook, even one running istio-proxy, is never the target and passes through', () => {
  const hook = pieces(RENDERED).find((p) => p.includes('igw-public-warmup'))!;
  assert.ok(pieces(once.stdout).includes(hook));
});

test('idempotent: post-rendering the output again gives the same bytes', () => {
  const twice = postRender([], once.stdout);
  assert.equal(twice.status, 0, twice.stderr);
  assert.equal(twice.stdout, once.stdout);
});

test('idempotent with empty documents anywhere: a blank one, a bare ---, one at the end (attack 10)', () => {
  for (const input of [
    `---\n\n---\n${RENDERED}`,
    `---\n---\n${RENDERED}`,
    `${RENDERED}---\n\n---\n`,
    `${RENDERED.trimEnd()}\n---\n\n\n---\n# only a comment\n`,
  ]) {
    const first = postRender([], input);
    assert.equal(first.status, 0, first.stderr);
    const second = postRender([], first.stdout);
    assert.equal(second.stdout, first.stdout, JSON.stringify(input.slice(0, 12)));
  }
});

test('an earlier run with another spec is brought up to date, not duplicated', () => {
  const other = join(tmp, 'other.yaml');
  writeFileSync(other, readFileSync(join(REPO_ROOT, SPEC), 'utf8').replace('longRequestP99Seconds: 100', 'longRequestP99Seconds: 20'));
  const r = runCli(['post-render', '--spec', other], { input: once.stdout });
  assert.equal(r.status, 0, r.stderr);
  const out = docs(r.stdout);
  const dep = find(out, 'Deployment', 'igw-public');
  assert.equal(dep.spec.template.spec.containers.filter((c: Obj) => c.name === 'gracegate-hc').length, 1);
  assert.equal(dep.spec.template.spec.volumes.length, 2);
  assert.equal(out.filter((o) => o.kind === 'ConfigMap').length, 1);
  assert.equal(JSON.parse(find(out, 'ConfigMap', 'igw-public-gracegate-hc').data['hc.json']).drainTimeoutSeconds, 24);
  const fresh = runCli(['post-render', '--spec', other], { input: RENDERED });
  assert.equal(r.stdout, fresh.stdout, 'same result as post-rendering the plain render');
});

test('the target can be chosen by name or by labels', () => {
  const byName = postRender(['--target-name', 'igw-public'], RENDERED);
  assert.equal(byName.stdout, once.stdout);
  const bySelector = postRender(['--target-selector', 'app=igw-public,istio=igw-public'], RENDERED);
  assert.equal(bySelector.stdout, once.stdout);
});

/** Every error: non-zero exit, nothing on stdout, one clear message on stderr. */
function assertFails(r: ReturnType<typeof runCli>, message: RegExp): void {
  assert.notEqual(r.status, 0);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, message);
}

test('errors: empty input, malformed YAML, a document that is not a Kubernetes object', () => {
  assertFails(postRender([], ''), /no Kubernetes objects in the input \(it is empty\)/);
  assertFails(postRender([], '---\n# nothing\n---\n'), /only empty documents/);
  assertFails(postRender([], `${RENDERED}---\nkind: Service\nmetadata: {name: [a\n`), /stdin:\d+: malformed YAML in document 8/);
  assertFails(postRender([], `${RENDERED}---\nfoo: bar\n`), /document 8 \(line \d+\) is not a Kubernetes object \(no apiVersion, kind, metadata.name\)/);
  assertFails(postRender([], '- a\n- b\n'), /document 1 \(line 1\) is a list, not a Kubernetes object/);
});

test('errors: no target names the rule; several targets ask for one', () => {
  assertFails(
    postRender(['--target-name', 'nope'], RENDERED),
    /no Deployment matches --target-name nope; the input has these Deployments: Deployment\/istio-ingress\/igw-public/,
  );
  const noProxy = RENDERED.replace(/- name: istio-proxy/, '- name: envoy');
  assertFails(postRender([], noProxy), /no Deployment matches a container named 'istio-proxy' \(the default; choose with --target-name or --target-selector\)/);
  const second = pieces(RENDERED)
    .find((p) => /^kind: Deployment$/m.test(p) && !p.includes('helm.sh/hook'))!
    .replace(/name: igw-public$/m, 'name: igw-private');
  assertFails(
    postRender([], `${RENDERED}---\n${second}`),
    /2 Deployments match a container named 'istio-proxy'.*: Deployment\/istio-ingress\/igw-public, Deployment\/istio-ingress\/igw-private; pick one with --target-name/,
  );
  assertFails(postRender(['--target-selector', 'app'], RENDERED), /--target-selector 'app': 'app' is not key=value/);
  assertFails(postRender(['--target-name', 'a', '--target-selector', 'a=b'], RENDERED), /not both/);
});

test('errors: a target the changes would not fit (labels, namespace, HPA)', () => {
  const other = join(tmp, 'renamed.yaml');
  writeFileSync(other, readFileSync(join(REPO_ROOT, SPEC), 'utf8').replace('name: igw-public', 'name: igw-edge'));
  assertFails(
    runCli(['post-render', '--spec', other], { input: RENDERED }),
    /pod labels lack app=igw-edge, istio=igw-edge.*render the chart with the release named 'igw-edge'/,
  );
  assertFails(
    postRender([], RENDERED.replace(/namespace: istio-ingress/g, 'namespace: edge')),
    /is in namespace 'edge' but the spec's metadata.namespace is 'istio-ingress'/,
  );
  const hpa = `---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: igw-public, namespace: istio-ingress}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: igw-public}, minReplicas: 1, maxReplicas: 5}\n`;
  assertFails(
    postRender([], RENDERED + hpa),
    /HorizontalPodAutoscaler\/istio-ingress\/igw-public scales Deployment\/istio-ingress\/igw-public, but the spec has a fixed spec.replicas \(2\): describe the HPA in spec.autoscaling.*or turn the chart's autoscaling off/,
  );
  assertFails(postRender(['--keep-replicas'], RENDERED + hpa), /--keep-replicas is gone: describe the HPA in the spec \(spec.autoscaling/);
});

test('errors: a missing or bad spec', () => {
  assertFails(runCli(['post-render'], { input: RENDERED }), /missing --spec/);
  assertFails(runCli(['post-render', '--spec', join(tmp, 'none.yaml')], { input: RENDERED }), /none.yaml: cannot read: ENOENT/);
});

test("model nlb: the chart's LoadBalancer Service gets the controller annotations, others stay", () => {
  const r = runCli(['post-render', '--spec', 'examples/nlb.yaml'], { input: RENDERED.replace(/igw-public/g, 'igw-aws') });
  assert.equal(r.status, 0, r.stderr);
  const svc = find(docs(r.stdout), 'Service', 'igw-aws');
  assert.equal(svc.metadata.annotations.owner, 'sre');
  assert.equal(svc.metadata.annotations['service.beta.kubernetes.io/aws-load-balancer-healthcheck-path'], '/health_check.html');
  assert.equal(find(docs(r.stdout), 'Service', 'igw-aws-gracegate-health').metadata.annotations, undefined);
});

test('post-render never loads cdk8s', () => {
  const r = postRender([], RENDERED, { NODE_OPTIONS: `--require ${join(REPO_ROOT, 'test/support/forbid-cdk8s.js')}` });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, once.stdout);
});

import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../support/run-cli';
import { helmHome, requireTool, run, tempDir, TOOLS } from './tools';

/**
 * The delivery paths run as a user runs them, with the real helm 3.17 and 4.1 binaries and the
 * real `kubectl kustomize`: gracegate post-render as Helm 3 --post-renderer, as the Helm 4 plugin,
 * and the Kustomize component (plain and as a Helm post-renderer script).
 */

const SPEC = 'examples/haproxy.yaml';
const RELEASE = 'igw-public';
const FIXTURE_126 = 'test/fixtures/charts/istio-gateway-1.26-like';
const IN_HOUSE = 'charts/gateway-additional-containers';
const tmp = tempDir('gracegate-helm-');
const POST_RENDER_SH = join(REPO_ROOT, 'plugins/post-render/post-render.sh');

type Obj = Record<string, any>;
const objects = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter((o) => o !== null);
const deployment = (text: string): Obj => objects(text).find((o) => o.kind === 'Deployment' && o.metadata.name === RELEASE)!;

/** Chart values that gracegate does not set: the chart's HPA is off (spec.replicas rules). */
const BASE_VALUES = ['--set', 'autoscaling.enabled=false'];

function template(helm: string, chart: string, extra: string[], env: NodeJS.ProcessEnv = {}) {
  const r = run(requireTool(helm), ['template', RELEASE, chart, '-n', 'istio-ingress', ...BASE_VALUES, ...extra], { env });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

function assertInjected(text: string): void {
  const dep = deployment(text);
  const pod = dep.spec.template.spec;
  assert.deepEqual(
    pod.containers.map((c: Obj) => c.name),
    ['istio-proxy', 'gracegate-hc'],
  );
  assert.equal(pod.containers[0].lifecycle.preStop.httpGet.path, '/wait-closed');
  assert.equal(pod.terminationGracePeriodSeconds, 190);
  assert.deepEqual(dep.spec.strategy.rollingUpdate, { maxSurge: 1, maxUnavailable: 0 });
  assert.equal(
    dep.spec.minReadySeconds,
    13,
    "the start hold 2 s (minSyncPeriod 1 s + propagation 1 s), then HAProxy inter 2 s, rise 2: 4 s to take a pod back in, + 6 s margin, + 1 s for the Ready time's second",
  );
  const kinds = objects(text).map((o) => `${o.kind}/${o.metadata.name}`);
  for (const k of ['ConfigMap/igw-public-gracegate-hc', 'Service/igw-public-gracegate-health', 'PodDisruptionBudget/igw-public-gracegate']) {
    assert.equal(kinds.filter((x) => x === k).length, 1, k);
  }
}

const helm3Env = helmHome(join(tmp, 'helm3'));
const helm4Env = helmHome(join(tmp, 'helm4'));
before(() => {
  const install = run(requireTool(TOOLS.helm4), ['plugin', 'install', join(REPO_ROOT, 'plugins/post-render')], { env: helm4Env });
  assert.equal(install.status, 0, install.stderr);
});

const helm3Args = ['--post-renderer', POST_RENDER_SH, '--post-renderer-args', `--spec=${SPEC}`];

test('helm 3: --post-renderer on a chart whose values cannot carry the sidecar (1.26-like)', () => {
  const plain = template(TOOLS.helm3, FIXTURE_126, [], helm3Env);
  const out = template(TOOLS.helm3, FIXTURE_126, helm3Args, helm3Env);
  assertInjected(out);
  // Helm 3 does not post-render hooks; its own chart test still comes out as rendered.
  assert.ok(objects(out).some((o) => o.kind === 'Pod' && o.metadata.annotations['helm.sh/hook'] === 'test'));
  // Every object of the plain render is still there, unchanged except the Deployment and the
  // gateway's LoadBalancer Service, which gains externalTrafficPolicy Local and nothing else.
  const isGatewayService = (o: Obj) => o.kind === 'Service' && o.spec?.type === 'LoadBalancer';
  const before = objects(plain).filter((o) => o.kind !== 'Deployment' && !isGatewayService(o));
  for (const o of before)
    assert.ok(
      objects(out).some((x) => JSON.stringify(x) === JSON.stringify(o)),
      `${o.kind}/${o.metadata.name} unchanged`,
    );
  const service = objects(plain).find(isGatewayService)!;
  assert.deepEqual(
    objects(out).find((o) => isGatewayService(o) && o.metadata.name === service.metadata.name),
    { ...service, spec: { ...service.spec, externalTrafficPolicy: 'Local' } },
  );
  // Idempotent through helm too: post-rendering helm's output again changes nothing.
  const again = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'post-render', '--spec', SPEC], { input: out });
  assert.equal(again.stdout, out);
});

test("helm 3: a post-render error fails helm template with gracegate's message", () => {
  const r = run(
    TOOLS.helm3,
    ['template', RELEASE, FIXTURE_126, '-n', 'istio-ingress', '--post-renderer', POST_RENDER_SH, '--post-renderer-args', `--spec=${SPEC}`],
    { env: helm3Env },
  );
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /HorizontalPodAutoscaler\/istio-ingress\/igw-public scales Deployment\/istio-ingress\/igw-public/);
});

/** The haproxy example, aimed at an in-house chart (`chart.kind: additional-containers`). */
function inHouseSpec(): string {
  const path = join(tmp, 'in-house.yaml');
  writeFileSync(path, readFileSync(join(REPO_ROOT, SPEC), 'utf8').replace('kind: istio-gateway ', 'kind: additional-containers '));
  return path;
}

test('helm 3 and 4 on the in-house chart; post-render agrees with the values overlay', () => {
  const spec = inHouseSpec();
  const synth = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'synth', spec, '--out', join(tmp, 'synth')]);
  assert.equal(synth.status, 0, synth.stderr);
  const inHouse = (helm: string, extra: string[], env: NodeJS.ProcessEnv) => {
    const r = run(requireTool(helm), ['template', RELEASE, IN_HOUSE, '-n', 'istio-ingress', ...extra], { env });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  };
  const overlaid = deployment(inHouse(TOOLS.helm3, ['-f', join(tmp, 'synth/values-overlay.yaml')], helm3Env));
  for (const [helm, args, env] of [
    [TOOLS.helm3, ['--post-renderer', POST_RENDER_SH, '--post-renderer-args', `--spec=${spec}`], helm3Env],
    [TOOLS.helm4, ['--post-renderer', 'gracegate', '--post-renderer-args', `--spec=${spec}`], helm4Env],
  ] as const) {
    const postRendered = inHouse(helm, [...args], env);
    assertInjected(postRendered);
    // The design's invariant: the overlay and the post-renderer are projections of one object.
    assert.deepEqual(deployment(postRendered), overlaid, `${helm}: the Deployment is the same whichever projection delivered it`);
  }
});

test('helm 4: the plugin installs with `helm plugin install DIR` and post-renders, hooks included', () => {
  const list = run(TOOLS.helm4, ['plugin', 'list'], { env: helm4Env });
  assert.match(list.stdout, /gracegate\s+0\.1\.0\s+postrenderer\/v1/);

  const args = ['--post-renderer', 'gracegate', '--post-renderer-args', `--spec=${SPEC}`];
  const out = template(TOOLS.helm4, FIXTURE_126, args, helm4Env);
  assertInjected(out);
  // Helm 4 sends hooks through the post-renderer: the chart's test Pod comes back as it was.
  const plainHook = objects(template(TOOLS.helm4, FIXTURE_126, [], helm4Env)).find((o) => o.kind === 'Pod');
  assert.deepEqual(
    objects(out).find((o) => o.kind === 'Pod'),
    plainHook,
  );
});

test('kustomize: the component gives the same Deployment as post-render, with kubectl kustomize', () => {
  const plain = template(TOOLS.helm3, FIXTURE_126, [], helm3Env);
  const dir = join(tmp, 'kz');
  mkdirSync(join(dir, 'app'), { recursive: true });
  writeComponent(join(dir, 'out'));
  writeFileSync(join(dir, 'app/all.yaml'), plain);
  writeFileSync(join(dir, 'app/kustomization.yaml'), 'resources: [all.yaml]\ncomponents: [../out/kustomize]\n');
  const k = run(requireTool(TOOLS.kubectl), ['kustomize', join(dir, 'app')]);
  assert.equal(k.status, 0, k.stderr);
  assertInjected(k.stdout);
  const postRendered = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'post-render', '--spec', SPEC], { input: plain });
  assert.deepEqual(deployment(k.stdout), deployment(postRendered.stdout));
  for (const kind of ['ConfigMap', 'PodDisruptionBudget']) {
    assert.deepEqual(
      objects(k.stdout).find((o) => o.kind === kind),
      objects(postRendered.stdout).find((o) => o.kind === kind),
    );
  }
});

test('kustomize: replace semantics on a chart that already sets the fields gracegate owns', () => {
  const preset = template(
    TOOLS.helm3,
    FIXTURE_126,
    [
      '--set',
      'strategy.type=RollingUpdate',
      '--set',
      'strategy.rollingUpdate.maxSurge=25%',
      '--set',
      'affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight=1',
      '--set',
      'affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey=zone',
      '--set',
      'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=gw',
      '--set',
      'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists',
    ],
    helm3Env,
  ).replace(
    '          image: auto\n',
    '          image: auto\n          lifecycle:\n            postStart: {exec: {command: [/bin/true]}}\n            preStop: {exec: {command: [sleep, "5"]}}\n',
  );
  const dir = join(tmp, 'kz-preset');
  mkdirSync(join(dir, 'app'), { recursive: true });
  writeComponent(join(dir, 'out'));
  writeFileSync(join(dir, 'app/all.yaml'), preset);
  writeFileSync(join(dir, 'app/kustomization.yaml'), 'resources: [all.yaml]\ncomponents: [../out/kustomize]\n');
  const k = run(TOOLS.kubectl, ['kustomize', join(dir, 'app')]);
  assert.equal(k.status, 0, k.stderr);
  const postRendered = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'post-render', '--spec', SPEC], { input: preset });
  assert.equal(postRendered.status, 0, postRendered.stderr);
  const fromKustomize = deployment(k.stdout);
  assert.deepEqual(fromKustomize, deployment(postRendered.stdout));
  const proxy = fromKustomize.spec.template.spec.containers[0];
  assert.deepEqual(Object.keys(proxy.lifecycle.preStop), ['httpGet'], 'preStop replaced, not merged with the exec');
  assert.ok(proxy.lifecycle.postStart, 'other handlers kept');
  assert.ok(fromKustomize.spec.template.spec.affinity.nodeAffinity, 'node affinity kept');
});

test('kustomize as a Helm post-renderer: the script with helm 3', () => {
  const component = writeComponent(join(tmp, 'kz-script'));
  const out = template(
    TOOLS.helm3,
    FIXTURE_126,
    ['--post-renderer', join(REPO_ROOT, 'plugins/kustomize/helm-post-renderer.sh'), '--post-renderer-args', component],
    { ...helm3Env, KUBECTL: TOOLS.kubectl },
  );
  assertInjected(out);
  const bad = run(
    TOOLS.helm3,
    [
      'template',
      RELEASE,
      FIXTURE_126,
      ...BASE_VALUES,
      '--post-renderer',
      join(REPO_ROOT, 'plugins/kustomize/helm-post-renderer.sh'),
      '--post-renderer-args',
      tmp,
    ],
    { env: helm3Env },
  );
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /usage: helm-post-renderer.sh COMPONENT_DIR/);
});

/** The component, written by `gracegate synth --kustomize` into DIR/kustomize; returns that path. */
function writeComponent(dir: string): string {
  const r = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'synth', SPEC, '--out', dir, '--kustomize']);
  assert.equal(r.status, 0, r.stderr);
  return join(dir, 'kustomize');
}

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT } from '../support/run-cli';
import { DEFAULT_HELM_BUDGET_SECONDS } from '../../src/delivery/argocd/helm';
import { argoCdEnv } from './argocd-env';
import { argoCdRig, objects } from './argocd-rig';
import { requireTool, run, TOOLS } from './tools';

/** `gracegate argocd generate` run the way argocd-cmp-server runs it (argocd-rig.ts). */

const rig = argoCdRig('gracegate-argocd-');
const { tmp, repo, generate } = rig;
const SPEC = readFileSync(join(REPO_ROOT, 'examples/haproxy.yaml'), 'utf8');

type Obj = Record<string, any>;

function assertInjected(stdout: string): void {
  const dep = objects(stdout).find((o) => o.kind === 'Deployment')!;
  assert.deepEqual(
    dep.spec.template.spec.containers.map((c: Obj) => c.name),
    ['istio-proxy', 'gracegate-hc'],
  );
  assert.equal(dep.spec.template.spec.containers[0].lifecycle.preStop.httpGet.path, '/wait-closed');
  assert.ok(objects(stdout).some((o) => o.kind === 'Service' && o.metadata.name === 'igw-public-gracegate-health'));
}

test('chart in the repo + values files + set, from ARGOCD_APP_PARAMETERS', () => {
  const root = repo(
    'repo-chart',
    {
      'gateways/public/gracegate.yaml': SPEC,
      'gateways/public/values-prod.yaml': 'service:\n  annotations:\n    owner: sre\nautoscaling:\n  enabled: false\n',
    },
    { 'charts/gateway': 'test/fixtures/charts/istio-gateway-1.26-like' },
  );
  const r = generate(join(root, 'gateways/public'), {
    ARGOCD_APP_PARAMETERS: JSON.stringify([
      { name: 'chart', string: '../../charts/gateway' },
      { name: 'values-files', array: ['values-prod.yaml'] },
      { name: 'set', map: { 'podAnnotations.team': 'edge', 'podAnnotations.example\\.com/owner': 'sre' } },
    ]),
  });
  assert.equal(r.status, 0, r.stderr);
  assertInjected(r.stdout);
  const svc = objects(r.stdout).find((o) => o.kind === 'Service' && o.metadata.name === 'igw-public')!;
  assert.equal(svc.metadata.annotations.owner, 'sre');
  const pod = objects(r.stdout).find((o) => o.kind === 'Deployment')!.spec.template.metadata;
  assert.equal(pod.annotations.team, 'edge');
  assert.equal(pod.annotations['example.com/owner'], 'sre');
  // stdout is manifests only; what helm ran and the app/release note are on stderr.
  assert.ok(objects(r.stdout).every((o) => typeof o.apiVersion === 'string' && typeof o.kind === 'string'));
  assert.match(
    r.stderr,
    /helm template --namespace=istio-ingress --kube-version=1\.31\.9 --values=\.\/values-prod\.yaml --set-string=podAnnotations\.team=edge --set-string=podAnnotations\.example\\\.com\/owner=sre -- igw-public \.\.\/\.\.\/charts\/gateway/,
  );
  assert.match(r.stderr, /application igw-public-prod: release named 'igw-public'/);
});

test('a rendered input from PARAM_* and the spec from the Application env (ARGOCD_ENV_*), without cdk8s', () => {
  const rendered = readFileSync(join(REPO_ROOT, 'test/delivery/post-render/fixtures/rendered-1.26-like.yaml'), 'utf8');
  const root = repo('repo-rendered', { 'app/gateway.yaml': SPEC, 'app/rendered.yaml': rendered });
  const r = generate(join(root, 'app'), {
    PARAM_RENDERED: 'rendered.yaml',
    ARGOCD_ENV_GRACEGATE_SPEC: 'gateway.yaml',
    PARAM_TARGET_NAME: 'igw-public',
    // Like post-render, generate never loads cdk8s.
    NODE_OPTIONS: `--require ${join(REPO_ROOT, 'test/support/forbid-cdk8s.js')}`,
  });
  assert.equal(r.status, 0, r.stderr);
  assertInjected(r.stdout);
  const direct = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'post-render', '--spec', join(root, 'app/gateway.yaml')], { input: rendered });
  assert.equal(r.stdout, direct.stdout, 'the same as gracegate post-render');
});

test('an Application without parameters generates: plugin {name}, plugin {} (ARGOCD_APP_PARAMETERS=null) and discovery alone (unset)', () => {
  const root = repo(
    'repo-self',
    { 'gracegate.yaml': SPEC.replace('kind: istio-gateway ', 'kind: additional-containers ') },
    { '.': 'charts/gateway-additional-containers' },
  );
  const forms: Array<[string, NodeJS.ProcessEnv]> = [
    ['plugin: {name: gracegate-v0.1.0}', argoCdEnv({})],
    ['plugin: {}', argoCdEnv({})],
    ['no plugin block (discovery)', argoCdEnv(undefined)],
  ];
  assert.equal(forms[0]![1].ARGOCD_APP_PARAMETERS, 'null', 'as Argo CD encodes an empty parameter list');
  assert.equal('ARGOCD_APP_PARAMETERS' in forms[2]![1], false);
  for (const [form, env] of forms) {
    const r = generate(root, env);
    assert.equal(r.status, 0, `${form}: ${r.stderr}`);
    assertInjected(r.stdout);
  }
});

test('parameters as Argo CD passes them (the JSON and PARAM_* together) select the chart, values and --set', () => {
  const root = repo(
    'repo-argo-env',
    {
      'gateways/public/gracegate.yaml': SPEC,
      'gateways/public/values-prod.yaml': 'service:\n  annotations:\n    owner: sre\n',
      'gateways/public/values-fixed.yaml': 'autoscaling:\n  enabled: false\n',
    },
    { 'charts/gateway': 'test/fixtures/charts/istio-gateway-1.26-like' },
  );
  const r = generate(
    join(root, 'gateways/public'),
    argoCdEnv({
      parameters: [
        { name: 'chart', string: '../../charts/gateway' },
        { name: 'values-files', array: ['values-prod.yaml', 'values-fixed.yaml'] },
        { name: 'set', map: { 'podAnnotations.team': 'edge' } },
      ],
      env: { GRACEGATE_IMAGE: 'registry.example.com/gracegate:1' },
    }),
  );
  assert.equal(r.status, 0, r.stderr);
  assertInjected(r.stdout);
  assert.match(r.stderr, /--values=\.\/values-prod\.yaml --values=\.\/values-fixed\.yaml --set-string=podAnnotations\.team=edge -- /);
  const dep = objects(r.stdout).find((o) => o.kind === 'Deployment')!;
  assert.equal(dep.spec.template.spec.containers[1].image, 'registry.example.com/gracegate:1');
});

test('ARGOCD_APP_PARAMETERS entries that are not parameter objects: exit 2 naming the entry', () => {
  const root = repo('repo-bad-json', { 'gracegate.yaml': SPEC });
  for (const [json, message] of [
    ['[null]', /ARGOCD_APP_PARAMETERS\[0\] must be an object with a 'name' \(required\)/],
    ['{}', /must be a JSON list/],
  ] as const) {
    const r = generate(root, { ARGOCD_APP_PARAMETERS: json });
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, message);
  }
});

test('errors: non-zero exit, a message on stderr, nothing on stdout', () => {
  const root = repo(
    'repo-errors',
    { 'app/gracegate.yaml': SPEC, 'app/bad-values.yaml': 'nope: 1\n' },
    { 'app/chart': 'test/fixtures/charts/istio-gateway-1.26-like' },
  );
  const app = join(root, 'app');
  const cases: Array<[NodeJS.ProcessEnv, RegExp]> = [
    [{ ARGOCD_APP_NAMESPACE: 'edge', PARAM_CHART: 'chart' }, /deploys to namespace 'edge' but gracegate.yaml has metadata.namespace 'istio-ingress'/],
    [{}, /nothing to render: set the 'chart' parameter/],
    [{ PARAM_CHART: 'chart', PARAM_VALUES_FILES_0: 'bad-values.yaml' }, /helm template failed \(exit 1\):\n.*Additional property nope is not allowed/s],
    [{ PARAM_CHART: 'chart' }, /HorizontalPodAutoscaler\/istio-ingress\/igw-public scales/],
    [{ PARAM_CHART: 'chart', GRACEGATE_HELM: join(tmp, 'no-helm') }, /GRACEGATE_HELM=.*no-helm: not an executable file/],
    [{ ARGOCD_APP_PARAMETERS: '[{"name":"charts","string":"chart"}]' }, /unknown plugin parameter 'charts'/],
    [{ PARAM_SPEC: 'missing.yaml', PARAM_CHART: 'chart' }, /plugin parameter 'spec' 'missing.yaml': no such file in the repository/],
  ];
  for (const [env, message] of cases) {
    const r = generate(app, env);
    assert.notEqual(r.status, 0, JSON.stringify(env));
    assert.equal(r.stdout, '', JSON.stringify(env));
    assert.match(r.stderr, message);
  }
});

test("helm's budget fits inside Argo CD's 60 s repo-server timeout, and GRACEGATE_HELM_TIMEOUT sets it", () => {
  // Argo CD's default request timeout (argocd-cmd-params-cm controller.repo.server.timeout.seconds)
  // also covers fetching the repo and sending it to the plugin: gracegate's helm must end well before.
  assert.ok(DEFAULT_HELM_BUDGET_SECONDS + 10 <= 60, `default helm budget ${DEFAULT_HELM_BUDGET_SECONDS}s`);
  const root = repo('repo-slow-helm', { 'gracegate.yaml': SPEC }, { chart: 'test/fixtures/charts/istio-gateway-1.26-like' });
  const slowHelm = join(tmp, 'slow-helm');
  writeFileSync(slowHelm, '#!/bin/sh\nexec /bin/sleep 30\n', { mode: 0o755 });
  const started = Date.now();
  const r = generate(root, { PARAM_CHART: 'chart', GRACEGATE_HELM: slowHelm, GRACEGATE_HELM_TIMEOUT: '1s' });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(
    r.stderr,
    /helm template did not finish within 1s, gracegate's budget inside Argo CD's 60 s repo-server timeout; to allow more, raise Argo CD's timeouts and GRACEGATE_HELM_TIMEOUT together/,
  );
  assert.ok(Date.now() - started < 15_000, 'helm was stopped at the budget');
  const bad = generate(root, { PARAM_CHART: 'chart', GRACEGATE_HELM_TIMEOUT: '1000h' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /GRACEGATE_HELM_TIMEOUT=1000h: duration '1000h' is longer than/);
});

test('plugin.yaml is a CMP v2 ConfigManagementPlugin, and the argo-cd chart values carry the same spec', () => {
  const plugin = parse(readFileSync(join(REPO_ROOT, 'plugins/argocd/plugin.yaml'), 'utf8'));
  assert.equal(plugin.apiVersion, 'argoproj.io/v1alpha1');
  assert.equal(plugin.kind, 'ConfigManagementPlugin');
  assert.deepEqual(plugin.spec.generate.command, ['gracegate', 'argocd', 'generate']);
  assert.equal(plugin.spec.discover.fileName, './gracegate.yaml');
  const names = plugin.spec.parameters.static.map((p: Obj) => p.name).sort();
  assert.deepEqual(names, ['chart', 'fail-on', 'image', 'release-name', 'rendered', 'set', 'spec', 'target-name', 'target-selector', 'values-files']);
  const values = parse(readFileSync(join(REPO_ROOT, 'plugins/argocd/argo-cd-values.yaml'), 'utf8'));
  assert.deepEqual(values.configs.cmp.plugins.gracegate, plugin.spec);
});

test('repo-server sidecar: the patch applies with kubectl kustomize; uid 999, the CMP mounts, its own /tmp', () => {
  const dir = join(tmp, 'argocd-install');
  mkdirSync(dir, { recursive: true });
  cpSync(join(REPO_ROOT, 'plugins/argocd'), join(dir, 'gracegate'), { recursive: true });
  // The parts of Argo CD's own argocd-repo-server Deployment the sidecar relies on.
  writeFileSync(
    join(dir, 'repo-server.yaml'),
    `apiVersion: apps/v1
kind: Deployment
metadata: {name: argocd-repo-server, namespace: argocd}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: argocd-repo-server}}
  template:
    metadata: {labels: {app.kubernetes.io/name: argocd-repo-server}}
    spec:
      containers:
      - name: argocd-repo-server
        image: quay.io/argoproj/argocd:v3.1.0
      volumes:
      - {name: var-files, emptyDir: {}}
      - {name: plugins, emptyDir: {}}
`,
  );
  writeFileSync(join(dir, 'kustomization.yaml'), 'namespace: argocd\nresources: [repo-server.yaml]\ncomponents: [gracegate]\n');
  const k = run(requireTool(TOOLS.kubectl), ['kustomize', dir]);
  assert.equal(k.status, 0, k.stderr);
  const out = objects(k.stdout);
  const cm = out.find((o) => o.kind === 'ConfigMap')!;
  assert.equal(cm.metadata.name, 'gracegate-cmp-plugin');
  assert.deepEqual(parse(cm.data['plugin.yaml']), parse(readFileSync(join(REPO_ROOT, 'plugins/argocd/plugin.yaml'), 'utf8')));
  const pod = out.find((o) => o.kind === 'Deployment')!.spec.template.spec;
  const sidecar = pod.containers.find((c: Obj) => c.name === 'gracegate-cmp');
  assert.equal(sidecar.securityContext.runAsUser, 999);
  assert.deepEqual(sidecar.command, ['/var/run/argocd/argocd-cmp-server']);
  const mounts = Object.fromEntries(sidecar.volumeMounts.map((m: Obj) => [m.mountPath, m]));
  assert.equal(mounts['/var/run/argocd'].name, 'var-files');
  assert.equal(mounts['/home/argocd/cmp-server/plugins'].name, 'plugins');
  assert.equal(mounts['/home/argocd/cmp-server/config/plugin.yaml'].subPath, 'plugin.yaml');
  assert.ok(pod.volumes.find((v: Obj) => v.name === mounts['/tmp'].name).emptyDir);
  // Nothing a tenant could take: no token (the pod's, and an empty directory where the container's would go), a read-only root, restricted's settings.
  assert.equal(pod.automountServiceAccountToken, false);
  const token = mounts['/var/run/secrets/kubernetes.io/serviceaccount'];
  assert.ok(token && pod.volumes.find((v: Obj) => v.name === token.name).emptyDir, 'an empty directory over the token path');
  assert.deepEqual(sidecar.securityContext, {
    runAsNonRoot: true,
    runAsUser: 999,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  });
  // The argo-cd chart overlay runs the same container; only the ConfigMap differs (the chart's argocd-cmp-cm).
  const values = parse(readFileSync(join(REPO_ROOT, 'plugins/argocd/argo-cd-values.yaml'), 'utf8'));
  const fromValues = values.repoServer.extraContainers[0];
  const withoutPluginMount = (c: Obj) => ({ ...c, volumeMounts: c.volumeMounts.filter((m: Obj) => m.name !== 'gracegate-cmp-plugin') });
  assert.deepEqual(withoutPluginMount(fromValues), withoutPluginMount(sidecar));
  assert.equal(fromValues.volumeMounts.find((m: Obj) => m.name === 'gracegate-cmp-plugin').subPath, 'gracegate.yaml');
  assert.equal(values.repoServer.volumes.find((v: Obj) => v.name === 'gracegate-cmp-plugin').configMap.name, 'argocd-cmp-cm');
});

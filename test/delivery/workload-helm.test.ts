import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { helmHome, requireTool, run, tempDir, TOOLS } from './tools';
import { REPO_ROOT } from '../support/run-cli';

/** An application chart as teams write them, and examples/app-workload.yaml put into it by real helm 3 and 4. */
const tmp = tempDir('gracegate-workload-helm-');
const CHART = join(tmp, 'inference-api');
const SPEC = join(REPO_ROOT, 'examples/app-workload.yaml');
type Obj = Record<string, any>;
const objects = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter((o) => o !== null);

const helm3Env = helmHome(join(tmp, 'helm3'));
const helm4Env = helmHome(join(tmp, 'helm4'));

before(() => {
  mkdirSync(join(CHART, 'templates'), { recursive: true });
  writeFileSync(join(CHART, 'Chart.yaml'), 'apiVersion: v2\nname: inference-api\nversion: 1.0.0\n');
  writeFileSync(join(CHART, 'values.yaml'), 'replicas: 3\n');
  writeFileSync(
    join(CHART, 'templates', 'deployment.yaml'),
    `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
      - name: api
        image: registry.example.com/inference-api:1.4.2
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /health, port: 8080}, periodSeconds: 3}
`,
  );
  writeFileSync(
    join(CHART, 'templates', 'service.yaml'),
    `apiVersion: v1
kind: Service
metadata: {name: {{ .Release.Name }}, namespace: {{ .Release.Namespace }}}
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{port: 80, targetPort: 8080}]
`,
  );
  const install = run(requireTool(TOOLS.helm4), ['plugin', 'install', join(REPO_ROOT, 'plugins/post-render')], { env: helm4Env });
  assert.equal(install.status, 0, install.stderr);
});

function template(helm: string, env: NodeJS.ProcessEnv, postRenderer: string): Obj[] {
  const r = run(
    requireTool(helm),
    ['template', 'inference-api', CHART, '-n', 'ml', '--post-renderer', postRenderer, '--post-renderer-args', `--spec=${SPEC}`],
    { env },
  );
  assert.equal(r.status, 0, r.stderr);
  return objects(r.stdout);
}

test('helm 3 (--post-renderer script) and helm 4 (the plugin) put the workload plan into an app chart alike', () => {
  const three = template(TOOLS.helm3, helm3Env, join(REPO_ROOT, 'plugins/post-render/post-render.sh'));
  const four = template(TOOLS.helm4, helm4Env, 'gracegate');
  // Helm 4 orders the objects its own way after post-rendering; the objects are the same.
  const byKind = (list: Obj[]) => [...list].sort((a, b) => a.kind.localeCompare(b.kind));
  assert.deepEqual(byKind(four), byKind(three));
  assert.deepEqual(
    byKind(three).map((o) => o.kind),
    ['Deployment', 'PodDisruptionBudget', 'Service'],
  );
  const dep = three.find((o) => o.kind === 'Deployment')!;
  const api = dep.spec.template.spec.containers[0];
  assert.deepEqual(api.lifecycle, { preStop: { sleep: { seconds: 5 } } });
  assert.deepEqual(api.env, [{ name: 'SHUTDOWN_TIMEOUT_SEC', value: '40' }]);
  assert.equal(dep.spec.template.spec.terminationGracePeriodSeconds, 50);
  assert.equal(dep.spec.replicas, 20);
  assert.deepEqual(api.readinessProbe, { httpGet: { path: '/health', port: 8080 }, periodSeconds: 3 }, "the chart's own fields stay");
});

test('Argo CD: gracegate argocd generate renders the app chart and post-renders it with a GracefulWorkload spec', () => {
  const app = join(tmp, 'argocd-app');
  cpSync(CHART, app, { recursive: true });
  cpSync(SPEC, join(app, 'gracegate.yaml'));
  const r = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'argocd', 'generate'], {
    cwd: app,
    timeoutMs: 90_000,
    env: { GRACEGATE_HELM: requireTool(TOOLS.helm3), ARGOCD_APP_NAME: 'inference-api', ARGOCD_APP_NAMESPACE: 'ml', ARGOCD_APP_PARAMETERS: 'null' },
  });
  assert.equal(r.status, 0, r.stderr);
  const byKind = (list: Obj[]) => [...list].sort((a, b) => a.kind.localeCompare(b.kind));
  assert.deepEqual(byKind(objects(r.stdout)), byKind(template(TOOLS.helm3, helm3Env, join(REPO_ROOT, 'plugins/post-render/post-render.sh'))));
  const wrongNamespace = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'argocd', 'generate'], {
    cwd: app,
    env: { GRACEGATE_HELM: requireTool(TOOLS.helm3), ARGOCD_APP_NAME: 'inference-api', ARGOCD_APP_NAMESPACE: 'shop', ARGOCD_APP_PARAMETERS: 'null' },
  });
  assert.equal(wrongNamespace.status, 2);
  assert.match(wrongNamespace.stderr, /deploys to namespace 'shop' but gracegate\.yaml has metadata\.namespace 'ml'/);
  assert.equal(wrongNamespace.stdout, '');
});

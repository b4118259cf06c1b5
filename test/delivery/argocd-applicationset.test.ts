import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../support/run-cli';
import { argoCdEnv, type Param } from './argocd-env';
import { helmHome, requireTool, run, tempDir, TOOLS } from './tools';

/**
 * plugins/argocd/applicationset/: the ApplicationSet and its example repo, tested as far as can
 * be without a cluster. The git directory generator is followed as its source reads
 * (argoproj/argo-cd applicationset/generators/git.go: every directory of the repo, kept when Go's
 * path.Match of a `directories[].path` matches and no `exclude` does; with goTemplate the
 * parameters are path.path, path.basename, path.basenameNormalized, path.segments). The template
 * is rendered by a real Go text/template with sprig, helm's, over its JSON form as the controller
 * does (applicationset/utils RenderTemplateParams marshals the template and renders the text).
 * Then each Application's source runs through `gracegate argocd generate` the way the CMP server
 * runs it: in a copy of the repo, cwd = the app path, with Argo CD's environment.
 */

const DIR = join(REPO_ROOT, 'plugins/argocd/applicationset');
const EXAMPLE_REPO = join(DIR, 'example-repo');
const tmp = tempDir('gracegate-appset-');
type Obj = Record<string, any>;

const appSet = parse(readFileSync(join(DIR, 'applicationset.yaml'), 'utf8')) as Obj;
const plugin = parse(readFileSync(join(REPO_ROOT, 'plugins/argocd/plugin.yaml'), 'utf8')) as Obj;

/** Every directory of a repo, relative, `/`-separated (the repo service's GetDirectories). */
function directories(root: string, at = ''): string[] {
  return readdirSync(join(root, at))
    .filter((n) => !n.startsWith('.') && statSync(join(root, at, n)).isDirectory())
    .flatMap((n) => [at ? `${at}/${n}` : n, ...directories(root, at ? `${at}/${n}` : n)]);
}

/** Go's path.Match for the patterns used here: `*` and `?` never match `/`. */
function pathMatch(pattern: string, name: string): boolean {
  const re = pattern
    .replace(/[.+^${}()|\\]/g, '\\$&')
    .replace(/\*/g, '[^/]*')
    .replace(/\?/g, '[^/]');
  return new RegExp(`^${re}$`).test(name);
}

function directoryParams(repo: string): Obj[] {
  const items = appSet.spec.generators[0].git.directories as Array<{ path: string; exclude?: boolean }>;
  return directories(repo)
    .filter((d) => items.some((i) => !i.exclude && pathMatch(i.path, d)) && !items.some((i) => i.exclude && pathMatch(i.path, d)))
    .map((d) => ({
      path: { path: d, basename: d.split('/').pop(), basenameNormalized: d.split('/').pop()!.toLowerCase().replace(/[_ /]/g, '-'), segments: d.split('/') },
    }));
}

/** The template rendered for one parameter set by Go's text/template (helm's engine), as the controller does. */
function renderTemplate(params: Obj): Obj {
  const chart = join(tmp, 'render');
  mkdirSync(join(chart, 'templates'), { recursive: true });
  writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: render\nversion: 0.1.0\n');
  writeFileSync(join(chart, 'templates', 'app.yaml'), `{{- with .Values }}\n${JSON.stringify(appSet.spec.template)}\n{{- end }}\n`);
  writeFileSync(join(tmp, 'params.json'), JSON.stringify(params));
  const r = run(requireTool(TOOLS.helm3), ['template', 'render', chart, '-f', join(tmp, 'params.json')], { env: helmHome(join(tmp, 'helm')) });
  assert.equal(r.status, 0, r.stderr);
  const docs = parseAllDocuments(r.stdout)
    .map((d) => d.toJS())
    .filter((d) => d !== null);
  assert.equal(docs.length, 1);
  return docs[0];
}

test('the ApplicationSet: a git directory generator and a template whose source is the gracegate plugin', () => {
  assert.equal(appSet.apiVersion, 'argoproj.io/v1alpha1');
  assert.equal(appSet.kind, 'ApplicationSet');
  assert.equal(appSet.spec.goTemplate, true);
  assert.deepEqual(appSet.spec.goTemplateOptions, ['missingkey=error']);
  const git = appSet.spec.generators[0].git;
  assert.equal(appSet.spec.generators.length, 1);
  assert.ok(Array.isArray(git.directories) && git.files === undefined, 'a directory generator');
  const source = appSet.spec.template.spec.source;
  assert.equal(source.repoURL, git.repoURL, 'the template deploys from the repo the generator reads');
  assert.equal(source.targetRevision, git.revision);
  assert.equal(source.path, '{{.path.path}}');
  assert.equal(source.plugin.name, `${plugin.metadata.name}-${plugin.spec.version}`, "the plugin's name-version, as Argo CD names a versioned CMP");
  const declared = new Set((plugin.spec.parameters.static as Array<{ name: string }>).map((p) => p.name));
  for (const p of source.plugin.parameters) assert.ok(declared.has(p.name), `parameter ${p.name} is one the plugin declares`);
});

test('rendered for the example repo: one Application per gateway directory, named and placed after it', () => {
  const params = directoryParams(EXAMPLE_REPO);
  assert.deepEqual(
    params.map((p) => p.path.path),
    ['gateways/istio-ingress/igw-internal', 'gateways/istio-ingress/igw-public', 'gateways/partner-ingress/igw-partner'],
  );
  const apps = params.map(renderTemplate);
  assert.deepEqual(
    apps.map((a) => a.metadata.name),
    ['istio-ingress-igw-internal', 'istio-ingress-igw-public', 'partner-ingress-igw-partner'],
  );
  for (const [i, app] of apps.entries()) {
    assert.match(app.metadata.name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    assert.equal(app.spec.source.path, params[i]!.path.path);
    const spec = parse(readFileSync(join(EXAMPLE_REPO, app.spec.source.path, 'gracegate.yaml'), 'utf8'));
    assert.equal(app.spec.destination.namespace, spec.metadata.namespace, 'the directory says the namespace the spec says');
  }
});

test('each Application renders through the plugin as the CMP server runs it, and synth plans the same tree', () => {
  const repo = join(tmp, 'repo');
  cpSync(EXAMPLE_REPO, repo, { recursive: true });
  cpSync(join(REPO_ROOT, 'charts/gateway-additional-containers'), join(repo, 'charts/gateway-additional-containers'), { recursive: true });
  const bin = join(tmp, 'bin');
  mkdirSync(bin, { recursive: true });
  cpSync(requireTool(TOOLS.helm3), join(bin, 'helm'));
  for (const params of directoryParams(repo)) {
    const app = renderTemplate(params);
    const spec = parse(readFileSync(join(repo, app.spec.source.path, 'gracegate.yaml'), 'utf8'));
    const r = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'argocd', 'generate'], {
      cwd: join(repo, app.spec.source.path),
      timeoutMs: 90_000,
      env: {
        PATH: `${bin}:${process.env.PATH}`,
        HOME: join(tmp, 'home'),
        ARGOCD_APP_NAME: app.metadata.name,
        ARGOCD_APP_NAMESPACE: app.spec.destination.namespace,
        ARGOCD_APP_SOURCE_PATH: app.spec.source.path,
        ...argoCdEnv({ parameters: app.spec.source.plugin.parameters as Param[] }),
      },
    });
    assert.equal(r.status, 0, `${app.metadata.name}: ${r.stderr}`);
    const objects = parseAllDocuments(r.stdout)
      .map((d) => d.toJS())
      .filter((o) => o !== null);
    const dep = objects.find((o) => o.kind === 'Deployment');
    assert.equal(dep.metadata.name, spec.metadata.name);
    assert.equal(dep.metadata.namespace, spec.metadata.namespace);
    const pod = dep.spec.template.spec;
    // 1.33 specs get the native sidecar, the 1.30 one the ordinary container.
    const hcIn = spec.spec.kubernetesVersion === '1.33' ? pod.initContainers : pod.containers;
    assert.ok(
      hcIn.some((c: Obj) => c.name === 'gracegate-hc'),
      `${app.metadata.name}: the hc sidecar`,
    );
    assert.equal(pod.containers[0].lifecycle.preStop.httpGet.path, '/wait-closed');
    assert.ok(objects.some((o) => o.kind === 'ConfigMap' && o.metadata.name === `${spec.metadata.name}-gracegate-hc`));
  }

  // The review side of the same repo: one synth output per gateway.
  const out = join(tmp, 'review');
  const s = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'synth', join(repo, 'gateways'), '--out', out]);
  assert.equal(s.status, 0, s.stderr);
  assert.deepEqual(
    JSON.parse(readFileSync(join(out, '.gracegate-synth-tree.json'), 'utf8')).gateways,
    directoryParams(repo)
      .map((p) => `${relative('gateways', p.path.path)}/gracegate`)
      .sort(),
  );
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../support/repo';
import { requireTool, run, tempDir, TOOLS } from './tools';

/**
 * Helm 3 and Helm 4 on one machine, as the README tells a user to keep them, with the real
 * helm 3.17.3 and 4.1.4: Helm 4's plugin manifest (`apiVersion: v1`, `type: postrenderer/v1`) is
 * one Helm 3 refuses, so a Helm 4 plugin installed where Helm 3 looks breaks Helm 3; Helm 4 with a
 * HELM_DATA_HOME of its own keeps them apart (Helm 4.1's `plugin install` writes to
 * $HELM_DATA_HOME/plugins whatever HELM_PLUGINS says, so HELM_PLUGINS alone does not).
 */

const tmp = tempDir('gracegate-helm-side-');
const CHART = join(REPO_ROOT, 'charts/gateway-additional-containers');
const SPEC = join(REPO_ROOT, 'examples/haproxy.yaml');

/** A user's environment: a HOME of its own, Helm's directories left to their defaults under it. */
function userEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  mkdirSync(home, { recursive: true });
  const env: NodeJS.ProcessEnv = { HOME: home, PATH: `${join(process.execPath, '..')}:/usr/bin:/bin`, KUBECTL: TOOLS.kubectl, ...extra };
  for (const key of ['XDG_DATA_HOME', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'HELM_DATA_HOME', 'HELM_CONFIG_HOME', 'HELM_CACHE_HOME', 'HELM_PLUGINS']) {
    if (!(key in extra)) env[key] = undefined; // unset: spawn leaves out undefined values
  }
  return env;
}

function helm(binary: string, args: string[], env: NodeJS.ProcessEnv, cwd = REPO_ROOT) {
  return run(requireTool(binary), args, { env, cwd });
}

type Obj = Record<string, any>;
const deployment = (text: string): Obj =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .find((o) => o?.kind === 'Deployment')!;
const containers = (text: string) => (deployment(text).spec.template.spec.containers as Obj[]).map((c) => c.name);

test('the clash: `helm plugin install` by Helm 4 into the shared plugin directory makes every Helm 3 command complain', () => {
  const env = userEnv(join(tmp, 'shared'));
  const install = helm(TOOLS.helm4, ['plugin', 'install', join(REPO_ROOT, 'plugins/post-render')], env);
  assert.equal(install.status, 0, install.stderr);
  const version = helm(TOOLS.helm3, ['version', '--short'], env);
  assert.match(version.stderr, /failed to load plugin .*unknown field "apiVersion"/);
  const list = helm(TOOLS.helm3, ['plugin', 'list'], env);
  assert.notEqual(list.status, 0);
});

test('kept apart as the README says: Helm 4 with HELM_DATA_HOME of its own; Helm 3 sees no plugin and complains of nothing', () => {
  const home = join(tmp, 'apart');
  const helm3Env = userEnv(home);
  const helm4Env = userEnv(home, { HELM_DATA_HOME: join(home, '.local/share/helm4') });
  for (const dir of ['plugins/post-render', 'plugins/kustomize']) {
    const install = helm(TOOLS.helm4, ['plugin', 'install', join(REPO_ROOT, dir)], helm4Env);
    assert.equal(install.status, 0, install.stderr);
  }
  const list4 = helm(TOOLS.helm4, ['plugin', 'list'], helm4Env);
  assert.match(list4.stdout, /^gracegate\s+0\.1\.0\s+postrenderer\/v1/m);
  assert.match(list4.stdout, /^gracegate-kustomize\s+0\.1\.0\s+postrenderer\/v1/m);
  const list3 = helm(TOOLS.helm3, ['plugin', 'list'], helm3Env);
  assert.equal(list3.status, 0, list3.stderr);
  assert.equal(list3.stderr, '');

  // The same gateway through both Helms: Helm 3 takes the script, Helm 4 the plugin.
  const via3 = helm(
    TOOLS.helm3,
    [
      'template',
      'igw-public',
      CHART,
      '-n',
      'istio-ingress',
      '--post-renderer',
      join(REPO_ROOT, 'plugins/post-render/post-render.sh'),
      '--post-renderer-args',
      `--spec=${SPEC}`,
    ],
    helm3Env,
  );
  assert.equal(via3.status, 0, via3.stderr);
  assert.equal(via3.stderr, '');
  const via4 = helm(
    TOOLS.helm4,
    ['template', 'igw-public', CHART, '-n', 'istio-ingress', '--post-renderer', 'gracegate', '--post-renderer-args', `--spec=${SPEC}`],
    helm4Env,
  );
  assert.equal(via4.status, 0, via4.stderr);
  assert.deepEqual(containers(via4.stdout), ['istio-proxy', 'gracegate-hc']);
  assert.deepEqual(deployment(via4.stdout), deployment(via3.stdout));
});

test('Kustomize as a post-renderer: Helm 3 takes the script path, Helm 4 refuses a path and takes the gracegate-kustomize plugin', () => {
  const home = join(tmp, 'kustomize');
  const work = join(home, 'work');
  mkdirSync(work, { recursive: true });
  const helm3Env = userEnv(home);
  const helm4Env = userEnv(home, { HELM_DATA_HOME: join(home, '.local/share/helm4') });
  const synth = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'synth', SPEC, '--out', 'out', '--kustomize'], { cwd: work });
  assert.equal(synth.status, 0, synth.stderr);
  const script = join(REPO_ROOT, 'plugins/kustomize/helm-post-renderer.sh');
  const base = ['template', 'igw-public', CHART, '-n', 'istio-ingress'];

  const via3 = helm(TOOLS.helm3, [...base, '--post-renderer', script, '--post-renderer-args', 'out/kustomize'], helm3Env, work);
  assert.equal(via3.status, 0, via3.stderr);
  assert.deepEqual(containers(via3.stdout), ['istio-proxy', 'gracegate-hc']);
  // The Helm 3 form on Helm 4: a path is not a plugin name there.
  const pathOn4 = helm(TOOLS.helm4, [...base, '--post-renderer', script, '--post-renderer-args', 'out/kustomize'], helm4Env, work);
  assert.notEqual(pathOn4.status, 0);
  assert.match(pathOn4.stderr, /not found/);
  // The Helm 4 form.
  const install = helm(TOOLS.helm4, ['plugin', 'install', join(REPO_ROOT, 'plugins/kustomize')], helm4Env);
  assert.equal(install.status, 0, install.stderr);
  const via4 = helm(TOOLS.helm4, [...base, '--post-renderer', 'gracegate-kustomize', '--post-renderer-args', 'out/kustomize'], helm4Env, work);
  assert.equal(via4.status, 0, via4.stderr);
  assert.deepEqual(deployment(via4.stdout), deployment(via3.stdout));
});

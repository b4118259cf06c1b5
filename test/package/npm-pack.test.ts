import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../support/repo';
import { freePort } from '../support/real-envoy';
import { waitFor } from '../support/wait';
import { helmHome, requireTool, run, tempDir, TOOLS } from '../delivery/tools';

/**
 * The npm package as a user gets it: `npm pack` in the checkout, `npm install ./gracegate-X.tgz`
 * in an empty directory, then the commands and the Helm plugin from node_modules/gracegate. The
 * dependencies come from npm's cache (`npm ci` put the same exact versions there) or the registry.
 */

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const tmp = tempDir('gracegate-npm-pack-');
const user = join(tmp, 'user');
const pkg = join(user, 'node_modules/gracegate');
// What a user's shell has: node and npm on PATH, nothing from the checkout.
const PATH = `${dirname(process.execPath)}:/usr/bin:/bin`;
let files: string[] = [];

function npx(args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}) {
  return run('npx', ['--no-install', 'gracegate', ...args], {
    cwd: user,
    timeoutMs: 60_000,
    env: { PATH, ...options.env },
    ...(options.input !== undefined ? { input: options.input } : {}),
  });
}

before(() => {
  const packed = run('npm', ['pack', '--json', '--pack-destination', tmp], { timeoutMs: 120_000 });
  assert.equal(packed.status, 0, packed.stderr);
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  files = info!.files.map((f) => f.path).sort();
  mkdirSync(user, { recursive: true });
  // A project of its own: without a package.json, npm installs into the nearest ancestor that has
  // one (a stray /tmp/package.json on a shared machine made this test install into /tmp).
  writeFileSync(join(user, 'package.json'), '{"private": true}\n');
  const installed = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--no-update-notifier', join(tmp, info!.filename)], {
    cwd: user,
    timeoutMs: 300_000,
    env: { PATH },
  });
  assert.equal(installed.status, 0, `npm install ./${info!.filename}: ${installed.stderr}`);
});

test('the tarball holds what users need only: the CLI, compiled src with types, charts, examples, plugins, docs', () => {
  const top = new Set(files.map((f) => (f.includes('/') ? f.slice(0, f.indexOf('/')) : f)));
  assert.deepEqual([...top].sort(), ['README.md', 'bin', 'charts', 'dist', 'docs', 'examples', 'package.json', 'plugins']);
  for (const must of [
    'bin/gracegate.js',
    'dist/src/index.js',
    'dist/src/index.d.ts',
    'dist/src/cli/main.js',
    'plugins/post-render/plugin.yaml',
    'plugins/post-render/post-render.sh',
    'plugins/argocd/plugin.yaml',
    'examples/haproxy.yaml',
    'docs/hc.md',
    'charts/gateway-additional-containers/Chart.yaml',
  ]) {
    assert.ok(files.includes(must), `${must} missing from the tarball`);
  }
  // No tests, benchmarks, scripts, TypeScript sources or source maps (whose sources are not shipped).
  assert.deepEqual(
    files.filter((f) => /^dist\/(test|bench|examples)\/|^(src|test|bench|scripts)\/|\.map$|\.tsbuildinfo$/.test(f)),
    [],
  );
  // Every compiled file has its source: a dist/ left over from a moved or deleted file would ship.
  const stale = files
    .filter((f) => f.startsWith('dist/src/'))
    .filter((f) => !existsSync(join(REPO_ROOT, f.replace(/^dist\//, '').replace(/\.d\.ts$|\.js$/, '.ts'))));
  assert.deepEqual(stale, [], 'compiled files without a source in src/: rebuild dist/ from scratch (rm -rf dist && npm run build)');
});

test('the images get the same package: scripts/image/pack.sh (a clean compile in a scratch copy, or the build as it is) packs the same files', () => {
  for (const [where, env] of [
    ['image-pack', {}],
    ['image-pack-dist', { GRACEGATE_PACK_FROM_DIST: '1' }],
  ] as const) {
    const dest = join(tmp, where);
    const packed = run('bash', [join(REPO_ROOT, 'scripts/image/pack.sh'), dest], { timeoutMs: 180_000, env: { ...process.env, ...env } });
    assert.equal(packed.status, 0, packed.stderr);
    const listed = run('tar', ['-tzf', packed.stdout.trim()]);
    assert.deepEqual(
      listed.stdout
        .split('\n')
        .filter(Boolean)
        .map((f) => f.replace(/^package\//, ''))
        .sort(),
      files,
      where,
    );
  }
});

test('installed in an empty directory: npx gracegate --version, plan, synth', () => {
  assert.equal(npx(['--version']).stdout, `${VERSION}\n`);
  const plan = npx(['plan', 'node_modules/gracegate/examples/haproxy.yaml']);
  assert.equal(plan.status, 0, plan.stderr);
  assert.match(plan.stdout, /drain-first/);
  const synth = npx(['synth', 'node_modules/gracegate/examples/haproxy.yaml', '--out', 'out']);
  assert.equal(synth.status, 0, synth.stderr);
  for (const f of ['values-overlay.yaml', 'manifests.yaml', 'PLAN.md', 'plan.json']) assert.ok(existsSync(join(user, 'out', f)), f);
  assert.match(
    readFileSync(join(user, 'out/values-overlay.yaml'), 'utf8'),
    new RegExp(`image: ghcr\\.io/gracegate/gracegate:${VERSION.replace(/\./g, '\\.')}`),
  );
});

type Obj = Record<string, any>;
function deployment(yaml: string): Obj {
  const dep = parseAllDocuments(yaml)
    .map((d) => d.toJS() as Obj)
    .find((o) => o?.kind === 'Deployment');
  assert.ok(dep, `no Deployment in:\n${yaml.slice(0, 500)}`);
  return dep;
}
const containerNames = (dep: Obj) => (dep.spec.template.spec.containers as Obj[]).map((c) => c.name);

test('installed: npx gracegate post-render, and the Helm plugin from node_modules/gracegate/plugins/post-render on helm 3 and helm 4', () => {
  const chart = join(pkg, 'charts/gateway-additional-containers');
  const spec = join(pkg, 'examples/haproxy.yaml');
  const rendered = run(requireTool(TOOLS.helm3), ['template', 'igw-public', chart, '-n', 'istio-ingress'], { env: { PATH, ...helmHome(join(tmp, 'h3')) } });
  assert.equal(rendered.status, 0, rendered.stderr);
  const direct = npx(['post-render', `--spec=${spec}`], { input: rendered.stdout });
  assert.equal(direct.status, 0, direct.stderr);
  assert.deepEqual(containerNames(deployment(direct.stdout)), ['istio-proxy', 'gracegate-hc']);

  // Helm 3: the script as --post-renderer.
  const helm3 = run(
    TOOLS.helm3,
    [
      'template',
      'igw-public',
      chart,
      '-n',
      'istio-ingress',
      '--post-renderer',
      join(pkg, 'plugins/post-render/post-render.sh'),
      '--post-renderer-args',
      `--spec=${spec}`,
    ],
    { cwd: user, env: { PATH, ...helmHome(join(tmp, 'h3')) } },
  );
  assert.equal(helm3.status, 0, helm3.stderr);
  // Helm 4: the plugin, installed into a plugin directory of Helm 4's own.
  const h4 = helmHome(join(tmp, 'h4'));
  const install = run(requireTool(TOOLS.helm4), ['plugin', 'install', join(pkg, 'plugins/post-render')], { cwd: user, env: { PATH, ...h4 } });
  assert.equal(install.status, 0, install.stderr);
  const helm4 = run(
    TOOLS.helm4,
    ['template', 'igw-public', chart, '-n', 'istio-ingress', '--post-renderer', 'gracegate', '--post-renderer-args', `--spec=${spec}`],
    { cwd: user, env: { PATH, ...h4 } },
  );
  assert.equal(helm4.status, 0, helm4.stderr);
  assert.deepEqual(deployment(helm3.stdout), deployment(direct.stdout));
  assert.deepEqual(deployment(helm4.stdout), deployment(direct.stdout));
});

test('installed: npx gracegate hc serves the health port (FAULT with no Envoy: LB 503, liveness 200)', async () => {
  const [healthPort, controlPort, envoyPort] = [await freePort(), await freePort(), await freePort()];
  // node_modules/.bin/gracegate is what npx runs; started directly so that kill() reaches hc itself.
  const hc = spawn(
    join(user, 'node_modules/.bin/gracegate'),
    [
      'hc',
      '--health-port',
      String(healthPort),
      '--control-port',
      String(controlPort),
      '--envoy-admin',
      `http://127.0.0.1:${envoyPort}`,
      '--state-file',
      join(tmp, 'state.json'),
    ],
    { cwd: user, env: { PATH }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  hc.stdout.on('data', (d: Buffer) => {
    log += d.toString();
  });
  hc.stderr.on('data', (d: Buffer) => {
    log += d.toString();
  });
  try {
    const live = await waitFor(
      'hc answering /live',
      20_000,
      () => fetch(`http://127.0.0.1:${healthPort}/live`, { signal: AbortSignal.timeout(1_000) }),
      100,
    ).catch((err: Error) => assert.fail(`${err.message}:\n${log}`));
    assert.equal(live.status, 200);
    const lb = await fetch(`http://127.0.0.1:${healthPort}/health_check.html`, { signal: AbortSignal.timeout(1_000) });
    assert.deepEqual({ status: lb.status, body: await lb.text() }, { status: 503, body: 'FAULT' });
  } finally {
    hc.kill('SIGTERM');
  }
});

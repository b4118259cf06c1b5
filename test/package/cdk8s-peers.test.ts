import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../support/repo';
import { testDir } from '../support/tmp';
import { run } from '../delivery/tools';

/**
 * gracegate declares cdk8s and constructs as cdk8s-plus-28 does: peer dependencies with the ranges
 * cdk8s-plus-28 accepts, so a user's cdk8s app keeps one copy of each, its own. The app here pins
 * constructs 10.3.0 (the lowest cdk8s-plus-28 accepts, not gracegate's development pin): a package
 * that brought its own constructs would get a second copy nested under it, and its constructs would
 * not be the app's `Construct`. The tarballs come from npm's cache (`npm ci` and
 * scripts/prepare-test-env.sh put them there) or the registry.
 */

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const USERS = { cdk8s: '2.70.106', constructs: '10.3.0' } as const;
const tmp = testDir('gracegate-cdk8s-peers-');
const app = join(tmp, 'app');
// What a user's shell has: node and npm on PATH, nothing from the checkout.
const PATH = `${dirname(process.execPath)}:/usr/bin:/bin`;

/** Every installed copy of `name` in the app's tree, as paths relative to the app. */
function copies(name: string): string[] {
  const found: string[] = [];
  const walk = (modules: string): void => {
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules)) {
      const dirs = entry.startsWith('@') ? readdirSync(join(modules, entry)).map((e) => join(modules, entry, e)) : [join(modules, entry)];
      for (const dir of dirs) {
        if (relative(modules, dir) === name && existsSync(join(dir, 'package.json'))) found.push(relative(app, dir));
        walk(join(dir, 'node_modules'));
      }
    }
  };
  walk(join(app, 'node_modules'));
  return found.sort();
}

before(() => {
  const packed = run('npm', ['pack', '--json', '--pack-destination', tmp], { timeoutMs: 120_000 });
  assert.equal(packed.status, 0, packed.stderr);
  const [info] = JSON.parse(packed.stdout) as { filename: string }[];
  mkdirSync(app, { recursive: true });
  writeFileSync(
    join(app, 'package.json'),
    `${JSON.stringify({ private: true, dependencies: { ...USERS, gracegate: `file:${join(tmp, info!.filename)}` } }, null, 2)}\n`,
  );
  const installed = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--no-update-notifier'], {
    cwd: app,
    timeoutMs: 300_000,
    env: { PATH },
  });
  assert.equal(installed.status, 0, `npm install: ${installed.stderr}`);
});

test("package.json: cdk8s and constructs are peers with cdk8s-plus-28's ranges, pinned for development only", () => {
  const plus = JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules/cdk8s-plus-28/package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
  assert.deepEqual(pkg.peerDependencies, { cdk8s: plus.peerDependencies['cdk8s'], constructs: plus.peerDependencies['constructs'] });
  for (const name of ['cdk8s', 'constructs']) {
    assert.equal(pkg.dependencies[name], undefined, `${name} in dependencies`);
    assert.match(pkg.devDependencies[name] ?? '', /^\d+\.\d+\.\d+$/, `${name} pinned in devDependencies`);
  }
});

test("a user's cdk8s app with its own constructs holds one copy of cdk8s and of constructs, the app's", () => {
  assert.deepEqual(copies('constructs'), ['node_modules/constructs']);
  assert.deepEqual(copies('cdk8s'), ['node_modules/cdk8s']);
  assert.deepEqual(copies('gracegate'), ['node_modules/gracegate']);
  const version = (name: string) => (JSON.parse(readFileSync(join(app, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  assert.deepEqual({ cdk8s: version('cdk8s'), constructs: version('constructs') }, USERS);
});

test("the app synthesises gracegate's GracefulGateway, which is a Construct of the app's own constructs", () => {
  const out = join(tmp, 'out');
  writeFileSync(
    join(app, 'main.js'),
    `const { readFileSync } = require('node:fs');
const { App, Chart } = require('cdk8s');
const { Construct } = require('constructs');
const { GracefulGateway, parseGatewaySpec } = require('gracegate');
const specFile = require.resolve('gracegate/examples/haproxy.yaml');
const app = new App({ outdir: process.argv[2] });
const chart = new Chart(app, 'edge');
const gateway = new GracefulGateway(chart, 'public', { spec: parseGatewaySpec(readFileSync(specFile, 'utf8'), specFile) });
app.synth();
process.stdout.write(JSON.stringify({ isConstruct: gateway instanceof Construct, inChart: chart.node.children.includes(gateway) }));
`,
  );
  const r = run(process.execPath, ['main.js', out], { cwd: app, env: { PATH }, timeoutMs: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { isConstruct: true, inChart: true });
  const objects = parseAllDocuments(readFileSync(join(out, 'edge.k8s.yaml'), 'utf8')).map((d) => d.toJS() as Record<string, any>);
  const dep = objects.find((o) => o['kind'] === 'Deployment');
  assert.ok(dep, 'a Deployment');
  assert.ok(
    (dep['spec'].template.spec.containers as { name: string }[]).some((c) => c.name === 'gracegate-hc'),
    'the hc container',
  );
});

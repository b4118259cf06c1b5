/**
 * bin/gracegate.js runs the bundles scripts/bundle.js makes: dist/gracegate.cjs with V8's code
 * cache, dist/hc.cjs (the sidecar) without one. Each case runs a copy of the launcher and the two
 * bundles alone, in a directory of its own: no dist/src, no node_modules.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { REPO_ROOT } from '../support/repo';
import { spawnHc } from '../support/hc';
import { testDir } from '../support/tmp';

function install(): string {
  const dir = testDir('gracegate-launcher-');
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'dist'));
  copyFileSync(join(REPO_ROOT, 'bin', 'gracegate.js'), join(dir, 'bin', 'gracegate.js'));
  for (const f of ['gracegate.cjs', 'hc.cjs']) copyFileSync(join(REPO_ROOT, 'dist', f), join(dir, 'dist', f));
  return dir;
}

const caches = (dir: string) =>
  readdirSync(join(dir, 'dist'))
    .filter((f) => f.endsWith('.cache'))
    .sort();
const plan = (dir: string) =>
  spawnSync(process.execPath, [join(dir, 'bin', 'gracegate.js'), 'plan', join(REPO_ROOT, 'examples', 'haproxy.yaml')], { encoding: 'utf8' });

describe('the launcher and its bundles', () => {
  test("a command runs from dist/gracegate.cjs alone; its first run writes the code cache, named by the bundle's hash, which later runs take", () => {
    const dir = install();
    const first = plan(dir);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /^gateway\s+istio-ingress\/igw-public$/m);
    const written = caches(dir);
    assert.equal(written.length, 1);
    assert.match(written[0]!, /^gracegate\.cjs\.[0-9a-f]{16}\.cache$/);
    const second = plan(dir);
    assert.equal(second.stdout, first.stdout);
  });

  test('a cache that is garbage is rejected by V8: the command still runs, and the cache is written again', () => {
    const dir = install();
    assert.equal(plan(dir).status, 0);
    const [cache] = caches(dir);
    writeFileSync(join(dir, 'dist', cache!), 'not a code cache');
    const r = plan(dir);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^gateway\s+istio-ingress\/igw-public$/m);
    assert.deepEqual(caches(dir), [cache]);
  });

  test('`gracegate hc` runs from dist/hc.cjs and uses no code cache: it answers /live and writes none', async () => {
    const dir = install();
    const hc = await spawnHc(['--envoy-admin', 'http://127.0.0.1:9', '--state-file', join(dir, 'state.json')], 5_000, {
      GRACEGATE_HC_BIN: join(dir, 'bin', 'gracegate.js'),
    });
    try {
      assert.equal((await hc.get('/live')).status, 200);
    } finally {
      await hc.stop();
    }
    assert.deepEqual(caches(dir), []);
  });

  test('without the bundles (a tsc-only build) it runs the compiled modules in dist/src', () => {
    const r = spawnSync(
      process.execPath,
      [
        '-e',
        `process.argv = [process.argv[0], ${JSON.stringify(join(REPO_ROOT, 'bin', 'gracegate.js'))}, '--version'];
      const fs = require('node:fs'); const read = fs.readFileSync;
      fs.readFileSync = (f, ...a) => { if (String(f).endsWith('.cjs')) { const e = new Error('absent'); e.code = 'ENOENT'; throw e; } return read(f, ...a); };
      require(${JSON.stringify(join(REPO_ROOT, 'bin', 'gracegate.js'))});
      process.on('exit', () => process.stderr.write(Object.keys(require.cache).some((k) => k.endsWith('/dist/src/cli/main.js')) ? 'dist/src' : 'bundle'));`,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version);
    assert.equal(r.stderr, 'dist/src');
  });
});

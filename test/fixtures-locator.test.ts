/**
 * The fixtures the project does not own are found through test/support/fixtures.ts alone, and it
 * finds them on a clone without ../shared: in the machine's cache, from Istio's source for 1.31, or
 * it says where it looked and how to get them. Each case runs the locator in a process of its own
 * with the shared fixtures pointed at a directory that does not exist.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT, TOOLS } from './support/repo';
import { testDir } from './support/tmp';

const LOCATOR = join(REPO_ROOT, 'dist', 'test', 'support', 'fixtures.js');
const NO_SHARED = join(tmpdir(), 'gracegate-no-shared-fixtures-here');

/** Calls one locator function in a fresh process; its answer, or the error it threw. */
function locate(call: string, env: Record<string, string> = {}): { ok: true; value: string } | { ok: false; name: string; message: string } {
  const script = `const f = require(${JSON.stringify(LOCATOR)});
try { process.stdout.write(JSON.stringify({ ok: true, value: f.${call} })); }
catch (err) { process.stdout.write(JSON.stringify({ ok: false, name: err.name, message: err.message })); }`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, GRACEGATE_SHARED_FIXTURES: NO_SHARED, ...env } });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const full = join(dir, f);
    return statSync(full).isDirectory() ? (f === 'fixtures' ? [] : sources(full)) : /\.(ts|js|sh)$/.test(f) ? [full] : [];
  });
}

describe('the fixtures locator (test/support/fixtures.ts)', () => {
  test('no test, bench or script names ../shared but the locator and the test preparation', () => {
    const offenders = [...sources(join(REPO_ROOT, 'test')), ...sources(join(REPO_ROOT, 'bench')), ...sources(join(REPO_ROOT, 'scripts'))]
      .map((f) => relative(REPO_ROOT, f))
      .filter((f) => !['test/support/fixtures.ts', 'test/fixtures-locator.test.ts', 'scripts/prepare-test-env.sh'].includes(f))
      // A path to the shared fixtures, built or written out, or their folder names.
      .filter((f) => /['"]\.\.['"],\s*['"]shared['"]|\.\.\/shared\/|istio-gateway-(chart|api)\b/.test(readFileSync(join(REPO_ROOT, f), 'utf8')));
    assert.deepEqual(offenders, []);
  });

  test('without ../shared and without a cached copy: an error that says where it looked and how to get the chart', () => {
    const emptyCache = testDir('gracegate-cache-');
    const r = locate("gatewayChart('1.27.9')", { GRACEGATE_CACHE: emptyCache });
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.name, 'FixtureMissingError');
    assert.match(r.message, /^the istio\/gateway chart 1\.27\.9 not found; looked in:\n/);
    assert.ok(r.message.includes(`  ${join(NO_SHARED, 'istio-gateway-chart', '1.27.9')}\n`));
    assert.ok(r.message.includes(`  ${join(emptyCache, 'fixtures', 'istio-gateway-chart', '1.27.9')}\n`));
    assert.match(
      r.message,
      /get it with: bash scripts\/prepare-test-env\.sh \(helm pull istio\/gateway --version 1\.27\.9 --repo https:\/\/istio-release\.storage\.googleapis\.com\/charts\)/,
    );
    const goldens = locate("gatewayApiGoldens('1.27.9')", { GRACEGATE_CACHE: emptyCache });
    assert.equal(goldens.ok, false);
    const source = locate("gatewayChart('1.31')", { GRACEGATE_CACHE: emptyCache });
    assert.ok(!source.ok && /go mod download of Istio's release-1\.31 source/.test(source.message));
  });

  test('without ../shared: the copy in the machine cache (GRACEGATE_CACHE) is found', () => {
    const cache = testDir('gracegate-cache-');
    const chart = join(cache, 'fixtures', 'istio-gateway-chart', '1.30.3');
    mkdirSync(join(chart, 'templates'), { recursive: true });
    cpSync(join(REPO_ROOT, 'test', 'fixtures', 'charts', 'istio-gateway-1.26-like'), chart, { recursive: true });
    assert.deepEqual(locate("gatewayChart('1.30.3')", { GRACEGATE_CACHE: cache }), { ok: true, value: chart });
    assert.deepEqual(locate('cacheDir()', { GRACEGATE_CACHE: cache }), { ok: true, value: cache }, 'the cache folder scripts/cache-dir.sh names');
  });

  test("without ../shared, on this machine: the 1.31 chart from Istio's source renders, and every chart and golden set the tests use is found", () => {
    const chart = locate("gatewayChart('1.31')");
    assert.ok(chart.ok, chart.ok ? '' : chart.message);
    if (!chart.ok) return;
    assert.match(chart.value, /\/go\/mod\/istio\.io\/istio@v0\.0\.0-\d{14}-[0-9a-f]{12}\/manifests\/charts\/gateway$/);
    const r = spawnSync(TOOLS.helm3, ['template', 'igw', chart.value, '-n', 'istio-ingress'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    const deployment = parseAllDocuments(r.stdout)
      .map((d) => d.toJS())
      .find((o) => o?.kind === 'Deployment');
    assert.equal(deployment.spec.template.spec.containers[0].name, 'istio-proxy');
    assert.deepEqual(locate('gatewayApiVersion()').ok, true);
    for (const v of ['1.26.8', '1.27.9', '1.30.3']) {
      const found = locate(`gatewayChart('${v}')`);
      assert.ok(found.ok, found.ok ? '' : `run bash scripts/prepare-test-env.sh: ${found.message}`);
    }
  });
});

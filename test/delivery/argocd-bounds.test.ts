/**
 * Every render is bounded (issue 46, item 4): inputs a tenant controls that cost minutes of CPU or
 * gigabytes are refused before the work, naming the limit; what is accepted stays inside the plugin
 * sidecar's 512 MiB (its `limits.memory` in plugins/argocd/repo-server-patch.yaml), measured here as
 * the peak resident set of `gracegate argocd generate` on the worst inputs just under the limits; and
 * the whole command has a deadline under Argo CD's that names the step that ran out.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { YAML_LIMITS, yamlWork } from '../../src/core/yaml-input';
import { REPO_ROOT } from '../support/repo';
import { argoCdRig } from './argocd-rig';
import type { RunResult } from './tools';

const rig = argoCdRig('gracegate-argocd-bounds-');
const { tmp, repo, generate } = rig;
const SPEC = readFileSync(join(REPO_ROOT, 'examples/haproxy.yaml'), 'utf8');
const AUTOSCALED = readFileSync(join(REPO_ROOT, 'examples/haproxy-autoscaled.yaml'), 'utf8');
const RENDERED = readFileSync(join(REPO_ROOT, 'test/delivery/post-render/fixtures/rendered-1.26-like.yaml'), 'utf8');
const MAX_RSS = join(REPO_ROOT, 'test/support/report-max-rss.js');

function assertRefused(r: RunResult, words: RegExp, what: string): void {
  assert.equal(r.status, 2, `${what}: exit ${r.status}: ${r.stderr.slice(0, 500)}`);
  assert.equal(r.stdout, '', what);
  assert.match(r.stderr, words, what);
}

/** The plugin sidecar's memory limit, as delivered. */
const SIDECAR_LIMIT_MIB = (() => {
  const patch = parse(readFileSync(join(REPO_ROOT, 'plugins/argocd/repo-server-patch.yaml'), 'utf8'));
  const limit = String(patch.spec.template.spec.containers[0].resources.limits.memory);
  assert.match(limit, /^\d+Mi$/);
  return Number.parseInt(limit, 10);
})();

/** Room left in the sidecar for argocd-cmp-server itself and the page cache of the checkout. */
const HEADROOM_MIB = 112;

const filler = (n: number) => `---\napiVersion: example.com/v1\nkind: Filler\nmetadata: {name: f${n}}\n`;
const budget = YAML_LIMITS.nodes - yamlWork(RENDERED).nodes - 100;

test('a spec asking for unbounded planning (maxReplicas 100,000,000, a 1-pod step every 15 s, a long sequence) is refused by the schema, naming the field', () => {
  // On 0d6d995 this spec took seconds to minutes of CPU in scaleDownRemovals (quadratic in the decisions) before helm ran.
  const huge = AUTOSCALED.replace('maxReplicas: 5', 'maxReplicas: 100000000')
    .replace('periodSeconds: 135', 'periodSeconds: 15')
    .replace('longRequestP99Seconds: 100', 'longRequestP99Seconds: 1700000');
  assert.equal(huge.split('\n').filter((l, i) => l !== AUTOSCALED.split('\n')[i]).length, 3, 'the three changes were made');
  const root = repo('repo-replicas', { 'app/gracegate.yaml': huge, 'app/rendered.yaml': RENDERED });
  assertRefused(
    generate(join(root, 'app'), { PARAM_RENDERED: 'rendered.yaml' }),
    /gracegate\.yaml:\d+: spec\.autoscaling\.maxReplicas: must be at most 10000, got 100000000/,
    'maxReplicas',
  );
});

test('one mapping with 40,000 keys (470 KiB, under the size limits) is refused in one pass, in the spec and in the rendered stream', () => {
  const keys = Array.from({ length: 40_000 }, (_, i) => `    k${i}: v\n`).join('');
  const spec = SPEC.replace('metadata:\n', `metadata:\n  annotations:\n${keys}`);
  const rendered = `${RENDERED}${filler(0)}data:\n${keys}`;
  const root = repo('repo-keys', { 'app/gracegate.yaml': spec, 'app/ok.yaml': SPEC, 'app/rendered.yaml': rendered, 'app/plain.yaml': RENDERED });
  assertRefused(
    generate(join(root, 'app'), { PARAM_RENDERED: 'plain.yaml' }),
    /gracegate\.yaml:\d+: \(document\): YAML: a mapping with 40000 keys, more than the 10000/,
    'spec',
  );
  assertRefused(
    generate(join(root, 'app'), { PARAM_RENDERED: 'rendered.yaml', PARAM_SPEC: 'ok.yaml' }),
    /rendered\.yaml: document \d+ \(line \d+\): a mapping with 40000 keys, more than the 10000 gracegate reads in one/,
    'rendered',
  );
});

test('15.5 MiB of small documents (under the 16 MiB size limit) is refused before it is parsed: more documents than gracegate reads', () => {
  const one = filler(0);
  const many = RENDERED + one.repeat(Math.floor((15.5 * 1024 * 1024) / one.length));
  const root = repo('repo-docs', { 'app/gracegate.yaml': SPEC, 'app/rendered.yaml': many });
  assertRefused(
    generate(join(root, 'app'), { PARAM_RENDERED: 'rendered.yaml' }),
    /rendered\.yaml: \d+ documents, more than the 10000 gracegate reads in one input/,
    'documents',
  );
});

test(`at the limits, generate's peak memory stays inside the plugin sidecar's limit with room for the CMP server`, (t) => {
  const shapes: Record<string, string> = {
    // ~1 KiB a node at the yaml library's peak: the densest text there is.
    'a flow list of single digits': `${RENDERED}${filler(0)}data: [${'0,'.repeat(budget - 10)}0]\n`,
    'a block list': `${RENDERED}${filler(0)}data:\n${'- 0\n'.repeat(Math.floor((budget - 10) / 2))}`,
    'documents up to the limit': RENDERED + Array.from({ length: YAML_LIMITS.documents - 20 }, (_, i) => filler(i)).join(''),
    'mappings of 9,999 keys':
      RENDERED + Array.from({ length: 12 }, (_, m) => `${filler(m)}data:\n${Array.from({ length: 9_999 }, (_, i) => `  k${i}: v\n`).join('')}`).join(''),
  };
  const peaks: string[] = [];
  for (const [what, text] of Object.entries(shapes)) {
    assert.ok(yamlWork(text).nodes <= YAML_LIMITS.nodes && yamlWork(text).documents <= YAML_LIMITS.documents, `${what} is within the limits`);
    const root = repo(`repo-peak-${peaks.length}`, { 'app/gracegate.yaml': SPEC, 'app/rendered.yaml': text });
    const r = generate(join(root, 'app'), { PARAM_RENDERED: 'rendered.yaml', NODE_OPTIONS: `--require ${MAX_RSS}` });
    assert.equal(r.status, 0, `${what}: ${r.stderr.slice(0, 500)}`);
    const kib = Number(/gracegate-test maxRSS (\d+)/.exec(r.stderr)?.[1]);
    assert.ok(kib > 0, r.stderr);
    const mib = Math.round(kib / 1024);
    peaks.push(`${what} (${(text.length / 1024).toFixed(0)} KiB): ${mib} MiB`);
    assert.ok(mib <= SIDECAR_LIMIT_MIB - HEADROOM_MIB, `${what}: peak ${mib} MiB, above ${SIDECAR_LIMIT_MIB} - ${HEADROOM_MIB} MiB`);
  }
  t.diagnostic(`peak resident set of generate, sidecar limit ${SIDECAR_LIMIT_MIB} MiB: ${peaks.join('; ')}`);
  // One node past the limit is refused before the parse.
  const over = `${RENDERED}${filler(0)}data: [${'0,'.repeat(budget + 200)}0]\n`;
  const root = repo('repo-over', { 'app/gracegate.yaml': SPEC, 'app/rendered.yaml': over });
  assertRefused(
    generate(join(root, 'app'), { PARAM_RENDERED: 'rendered.yaml' }),
    /about \d+ YAML nodes, more than the 250000 gracegate reads in one input/,
    'nodes',
  );
});

test('the values helm parses are bounded together (files and the chart values.yaml): 2 MiB', () => {
  const root = repo('repo-values', { 'app/gracegate.yaml': SPEC }, { 'app/chart': 'test/fixtures/charts/istio-gateway-1.26-like' });
  const app = join(root, 'app');
  const mib = `x: [${'0,'.repeat(512 * 1024 - 8)}0]\n`;
  for (const i of [1, 2, 3]) writeFileSync(join(app, `v${i}.yaml`), mib);
  assertRefused(
    generate(app, {
      ARGOCD_APP_PARAMETERS: JSON.stringify([
        { name: 'chart', string: 'chart' },
        { name: 'values-files', array: ['v1.yaml', 'v2.yaml', 'v3.yaml'] },
      ]),
    }),
    /the values files and the chart's values\.yaml hold \d+ bytes together; helm may parse at most 2 MiB/,
    'values',
  );
});

test("the whole command has a deadline (GRACEGATE_TIMEOUT) under Argo CD's, and says which step ran out: helm stopped at it, or gracegate's own step", () => {
  const root = repo(
    'repo-deadline',
    { 'app/gracegate.yaml': SPEC, 'app/rendered.yaml': RENDERED },
    { 'app/chart': 'test/fixtures/charts/istio-gateway-1.26-like' },
  );
  const app = join(root, 'app');
  const slowHelm = join(tmp, 'slow-helm');
  writeFileSync(slowHelm, '#!/bin/sh\nexec /bin/sleep 60\n', { mode: 0o755 });
  const helm = generate(app, { PARAM_CHART: 'chart', GRACEGATE_HELM: slowHelm, GRACEGATE_HELM_TIMEOUT: '40s', GRACEGATE_TIMEOUT: '3s' });
  assertRefused(helm, /helm template did not finish within the deadline of the whole command \(GRACEGATE_TIMEOUT\)/, 'helm at the deadline');
  // A step of gracegate's own that never returns: the watchdog names it and ends the process; nothing on stdout.
  const stalled = generate(app, {
    PARAM_RENDERED: 'rendered.yaml',
    GRACEGATE_TIMEOUT: '3s',
    NODE_OPTIONS: `--require ${join(REPO_ROOT, 'test/support/stall-stdout.js')}`,
  });
  assert.equal(stalled.stdout, '');
  assert.notEqual(stalled.status, 0);
  assert.match(
    stalled.stderr,
    /gracegate argocd generate: (reading the parameters|checking the paths|planning the spec|reading the rendered file|post-render) did not finish within 3s, the deadline of the whole command inside Argo CD's 60 s repo-server timeout; nothing was written/,
  );
  const bad = generate(app, { PARAM_RENDERED: 'rendered.yaml', GRACEGATE_TIMEOUT: 'soon' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /GRACEGATE_TIMEOUT=soon: /);
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { LintFinding } from '../../src/lint/rule';
import { CLI } from '../emit/helpers';
import { renderChartFixtures, type ChartFixture } from './chart-fixtures';

/*
 * `gracegate lint --spec DIR` (issue 36): each gateway of the input judged with the spec that
 * names it. Two of gracegate's outputs side by side (envoy.yaml's igw-mesh-edge and f5.yaml's
 * igw-partner, each through its values overlay on istio/gateway): clean with both specs; a drift in
 * one is named on that gateway alone; a spec for a gateway the input lacks is bad input.
 */

const work = mkdtempSync(join(tmpdir(), 'gracegate-lint-specdir-'));
after(() => rmSync(work, { recursive: true, force: true }));
let pair: ChartFixture[] = [];
before(() => {
  const all = renderChartFixtures(join(work, 'charts'));
  pair = ['(envoy.yaml)', '(f5.yaml)'].map((ex) => all.find((f) => f.name.startsWith('istio/gateway') && f.name.endsWith(ex))!);
  assert.equal(pair.filter(Boolean).length, 2);
});

function lint(text: string, specs: string): { status: number | null; findings: LintFinding[]; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, 'lint', '-', '--spec', specs, '--format', 'json'], { input: text, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, findings: r.stdout ? (JSON.parse(r.stdout).findings as LintFinding[]) : [], stderr: r.stderr };
}

function specDir(name: string, fixtures: ChartFixture[]): string {
  const dir = join(work, name);
  mkdirSync(dir);
  fixtures.forEach((f, i) => copyFileSync(f.spec!, join(dir, `${i}-gateway.yaml`)));
  writeFileSync(join(dir, 'README.txt'), 'not a spec: only .yaml and .yml files are read\n');
  return dir;
}

test('two gateways, a directory with the spec of each: clean', () => {
  const r = lint(pair.map((f) => f.text).join('\n---\n'), specDir('both', pair));
  assert.deepEqual(
    r.findings.map((f) => `${f.rule} ${f.object} ${f.field}: ${f.message}`),
    [],
  );
  assert.equal(r.status, 0, r.stderr);
});

test("a drift in one gateway is named on that gateway, with its own plan's number", () => {
  const partner = pair[1]!.text;
  const grace = /terminationGracePeriodSeconds: (\d+)/.exec(partner)!;
  const edited = partner.replace(grace[0], 'terminationGracePeriodSeconds: 30');
  const r = lint(`${pair[0]!.text}\n---\n${edited}`, specDir('drift', pair));
  assert.equal(r.status, 1);
  const mismatch = r.findings.filter((f) => f.rule === 'plan-mismatch');
  assert.deepEqual(
    mismatch.map((f) => `${f.object} ${f.field}`),
    ['Deployment/istio-ingress/igw-partner spec.template.spec.terminationGracePeriodSeconds'],
  );
  assert.match(mismatch[0]!.message, new RegExp(`the manifest has 30, the plan ${grace[1]}$`));
  assert.ok(
    r.findings.every((f) => !f.object.includes('igw-mesh-edge')),
    'nothing on the gateway left alone',
  );
});

test('a spec in the directory for a gateway the input lacks is bad input, named', () => {
  const r = lint(pair[0]!.text, specDir('missing', pair));
  assert.equal(r.status, 2);
  assert.match(r.stderr, /no workload named 'igw-partner' \(namespace istio-ingress\)/);
});

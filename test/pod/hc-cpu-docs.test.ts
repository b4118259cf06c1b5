import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { blockIn, cpuShareMethod, cpuShareReading, METHOD_BEGIN, METHOD_END, READING_BEGIN, READING_END } from '../../bench/hc-cpu-share-prose';
import { cfsQuotaUs, cpuShareTable, cpuShares, milliCpu, tableIn, type CpuShareResults } from '../../bench/hc-cpu-share-table';
import { HC_RESOURCES } from '../../src/pod/pod-changes';
import { REPO_ROOT } from '../support/repo';

const results = (): CpuShareResults => JSON.parse(readFileSync(join(REPO_ROOT, 'docs/bench/hc-cpu-share-results.json'), 'utf8')) as CpuShareResults;
const limits: { cpu?: string; memory: string } = HC_RESOURCES.limits;
const chosen = { request: HC_RESOURCES.requests.cpu, limit: limits.cpu ?? null };

test("docs/manifests.md's CPU share table is the rendering of docs/bench/hc-cpu-share-results.json, with HC_RESOURCES' CPU marked", () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs/manifests.md'), 'utf8');
  assert.equal(tableIn(doc), cpuShareTable(results(), chosen), 'run node dist/bench/hc-cpu-share-docs-main.js');
});

test("docs/manifests.md's sentences around the CPU share tables quote docs/bench/hc-cpu-share-results.json, not a hand", () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs/manifests.md'), 'utf8');
  assert.equal(
    blockIn(doc, METHOD_BEGIN, METHOD_END),
    `${METHOD_BEGIN}\n${cpuShareMethod(results())}${METHOD_END}`,
    'run node dist/bench/hc-cpu-share-docs-main.js',
  );
  assert.equal(
    blockIn(doc, READING_BEGIN, READING_END),
    `${READING_BEGIN}\n${cpuShareReading(results(), chosen)}${READING_END}`,
    'run node dist/bench/hc-cpu-share-docs-main.js',
  );
});

test("the sidecar's CPU request and limit are a pair the benchmark measured, and one under which no probe failed beside the neighbour", () => {
  const row = results().rows.find((r) => r.request === chosen.request && r.limit === chosen.limit);
  assert.ok(row, `HC_RESOURCES' cpu ${chosen.request} / ${chosen.limit ?? 'no limit'} is not in docs/bench/hc-cpu-share-results.json: measure it first`);
  assert.equal(row.contended.failed, 0, `${row.candidate}: ${row.contended.failures}`);
});

test("Kubernetes' arithmetic from a request and a limit to cpu.shares and the CFS quota", () => {
  assert.equal(milliCpu('10m'), 10);
  assert.equal(milliCpu('0.5'), 500);
  assert.equal(milliCpu('2'), 2000);
  assert.throws(() => milliCpu('10Mi'), /not a CPU quantity/);
  // MilliCPUToShares: 1024 per CPU, rounded down, at least 2.
  assert.deepEqual([1, 10, 50, 100, 200, 1000].map(cpuShares), [2, 10, 51, 102, 204, 1024]);
  // MilliCPUToQuota: per 100 ms period, at least 1 ms; no limit, no quota.
  assert.deepEqual([null, 1, 200, 500].map(cfsQuotaUs), [-1, 1000, 20_000, 50_000]);
});

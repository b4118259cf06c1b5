import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pipelineTable, tableIn, type PipelineResults } from '../../bench/hc-pipeline-table';
import { REPO_ROOT } from '../support/repo';

test("docs/hc.md's pipelining table is the rendering of docs/bench/hc-pipeline-results.json, and the renewed run meets the goal it states", () => {
  const results = JSON.parse(readFileSync(join(REPO_ROOT, 'docs/bench/hc-pipeline-results.json'), 'utf8')) as PipelineResults;
  const doc = readFileSync(join(REPO_ROOT, 'docs/hc.md'), 'utf8');
  assert.equal(tableIn(doc), pipelineTable(results), 'run node dist/bench/hc-pipeline-docs-main.js');
  // The prose says every pattern is within 3x and no probe failed: the figures must say so too.
  for (const row of results.renewed.rows) {
    assert.equal(row.failed, 0, `${row.attack}: ${row.failed} probes failed`);
    assert.ok(row.ratio !== null && row.ratio <= 3, `${row.attack}: p99 ${row.ratio}x the unattacked`);
  }
  // "Before, probes waited up to nearly their 2 s timeout ... no probe failed after": the before run's slowest p99 within 10 % of 2 s.
  const before = Math.max(...results.before.rows.map((r) => r.p99));
  assert.ok(before >= 1800 && before < 2000, `the before run's slowest p99 is ${before} ms`);
  assert.match(doc, /Before, probes waited up to nearly their 2 s timeout/);
  assert.ok(
    results.after.rows.every((r) => r.failed === 0),
    'no probe failed after',
  );
});

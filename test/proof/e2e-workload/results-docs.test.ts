import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DOCS, generatedBlocks, readResults, withBlocks } from './results';
import { EXPERIMENT, refusalWindows } from './run-cell';

test('docs/workloads.md and README carry the tables made from docs/workloads-results.json, unchanged', () => {
  const results = readResults();
  const ids = results.cells.map((c) => c.id);
  for (const id of ['S1', 'S2', 'S3', 'S4', 'L1', 'L2', 'L3', 'L4', 'G-short', 'G-long', 'F-long', 'F-long-serialised', 'G-long-serialised'])
    assert.ok(ids.includes(id), `${id} in the results file`);
  assert.ok(
    results.cells.every((c) => c.scale === 1),
    'the published results are from a full-scale run',
  );
  const blocks = generatedBlocks(results);
  for (const doc of DOCS) {
    const text = readFileSync(doc, 'utf8');
    assert.equal(
      withBlocks(text, blocks, doc),
      text,
      `${doc}: its tables differ from docs/workloads-results.json (run: node dist/test/proof/e2e-workload/report-main.js)`,
    );
  }
});

test("the published run agrees with what the docs say of it: gracegate's cells lose nothing, S3 and L2 nothing, S1 and L3 lose requests", () => {
  const byId = new Map(readResults().cells.map((c) => [c.id, c]));
  for (const id of ['G-short', 'G-long', 'G-long-serialised', 'S3', 'S4', 'L2', 'L4']) assert.equal(byId.get(id)!.failures, 0, id);
  for (const id of ['S1', 'S2', 'L1', 'L3', 'D-short']) assert.ok(byId.get(id)!.failures > 0, id);
});

test('the refusal windows: time a closed pod is in the rules, and time no open pod is', () => {
  const span = (inRules: [number, number], closedFrom: number) => ({ inRules, closedFrom });
  // Pod a leaves the rules at 40 but stops listening at 10; pod b is in from 30 and listens throughout.
  assert.deepEqual(refusalWindows([span([0, 40], 10), span([30, Infinity], Infinity)], 0, 100), { closedInRules: 30, noneListening: 20 });
  // A preStop longer than the delay: removed at 40, closed at 50: never a closed pod in the rules.
  assert.deepEqual(refusalWindows([span([0, 40], 50), span([30, Infinity], Infinity)], 0, 100), { closedInRules: 0, noneListening: 0 });
});

test("docs/workloads.md's prose quotes the rig's settings, not a run: the network path and the warm-up are EXPERIMENT's", () => {
  const doc = readFileSync(DOCS.find((d) => d.endsWith('workloads.md'))!, 'utf8');
  const path = `${EXPERIMENT.propagation.minSeconds}-${EXPERIMENT.propagation.maxSeconds} s`;
  for (const [, range] of doc.matchAll(/(\d+-\d+ s) (?:network path|late|later)\b/g)) assert.equal(range, path, `docs/workloads.md: "${range}"`);
  assert.ok(doc.includes(`${EXPERIMENT.warmupSeconds} s into the load`), `docs/workloads.md: the warm-up is ${EXPERIMENT.warmupSeconds} s`);
});

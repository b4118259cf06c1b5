import { forDocsDir, PROOF_DOC } from '../../support/docs-links';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pinnedEnvoys } from '../../support/real-envoy';
import { REPO_ROOT } from '../../support/repo';
import { KINDS } from './probe';
import { E2E_SEQUENCES } from './e2e-table';
import { README_LONG_LIVED_MARKERS, readLongLivedResults, renderLongLivedMd, renderReadmeLongLived } from './render';

// docs/long-lived.md and the README's long-lived section are generated from docs/long-lived-results.json: a hand edit, or a results
// file committed without re-rendering, fails here.
const results = readLongLivedResults(join(REPO_ROOT, 'docs', 'long-lived-results.json'));

test('docs/long-lived.md is what docs/long-lived-results.json renders to', () => {
  assert.equal(
    readFileSync(join(REPO_ROOT, 'docs', 'long-lived.md'), 'utf8'),
    renderLongLivedMd(results),
    'regenerate: npm run build && node dist/test/proof/longlived/render-main.js (or re-measure with report-main.js)',
  );
});

test('the results cover every pinned Envoy, both scenarios and every kind, with no lost message', () => {
  for (const e of pinnedEnvoys()) {
    for (const scenario of ['drain', 'rotate']) {
      const run = results.runs.find((r) => r.envoy === e.version && r.scenario === scenario);
      assert.ok(run, `${scenario} measured on Envoy ${e.version}`);
      assert.deepEqual(
        run.kinds.map((k) => k.kind),
        [...KINDS],
      );
      for (const k of run.kinds) {
        assert.equal(k.gaps, 0, `${scenario} ${e.version} ${k.kind}: no gap in the sequence numbers`);
        assert.ok(k.end, `${scenario} ${e.version} ${k.kind}: the end was seen`);
      }
    }
  }
});

test("docs/proof.md's long-lived section is what docs/long-lived-results.json renders to", () => {
  const readme = readFileSync(PROOF_DOC, 'utf8');
  const [begin, end] = README_LONG_LIVED_MARKERS;
  const i = readme.indexOf(begin);
  const j = readme.indexOf(end);
  assert.ok(i >= 0 && j > i, `docs/proof.md has ${begin} ... ${end}`);
  assert.equal(
    readme.slice(i + begin.length + 1, j - 1),
    forDocsDir(renderReadmeLongLived(results)),
    'regenerate: npm run build && node dist/test/proof/longlived/render-main.js',
  );
});

test('the end-to-end runs cover every pinned Envoy and every termination order; with the plan no message is lost and no drain is held to its timeout', () => {
  const e2e = results.e2e ?? [];
  for (const e of pinnedEnvoys()) {
    for (const sequence of E2E_SEQUENCES)
      assert.ok(
        e2e.some((r) => r.envoy === e.version && r.sequence === sequence),
        `${sequence} measured end to end on Envoy ${e.version}`,
      );
  }
  for (const r of e2e.filter((x) => x.sequence === 'gracegate-plan')) {
    assert.equal(r.drain.timedOut, false, `${r.envoy}: the drain ended at in-flight 0`);
    for (const k of r.kinds) {
      assert.equal(k.lost, 0, `${r.envoy} ${k.kind}: no message lost`);
      assert.deepEqual(
        Object.keys(k.endedBy).filter((c) => c !== 'rotation'),
        [],
        `${r.envoy} ${k.kind}: every stream on the leaving pod ended by rotation`,
      );
    }
  }
  for (const r of e2e.filter((x) => x.sequence === 'gracegate-plan-rolling')) {
    for (const t of r.terminations) {
      assert.equal(t.drainTimedOut, false, `${r.envoy} rolling ${t.pod}: the drain ended at in-flight 0`);
      assert.deepEqual(
        Object.keys(t.endedBy).filter((c) => c !== 'rotation'),
        [],
        `${r.envoy} rolling ${t.pod}: its streams ended by rotation`,
      );
    }
  }
  for (const r of e2e.filter((x) => x.sequence === 'gracegate'))
    assert.equal(r.drain.timedOut, true, `${r.envoy}: without the plan the streams hold the drain to its timeout`);
});

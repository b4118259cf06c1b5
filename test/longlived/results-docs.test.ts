import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pinnedEnvoys } from '../support/real-envoy';
import { REPO_ROOT } from '../support/repo';
import { KINDS } from './probe';
import { readLongLivedResults, renderLongLivedMd } from './render';

// docs/long-lived.md is generated from docs/long-lived-results.json: a hand edit, or a results
// file committed without re-rendering, fails here.
const results = readLongLivedResults(join(REPO_ROOT, 'docs', 'long-lived-results.json'));

test('docs/long-lived.md is what docs/long-lived-results.json renders to', () => {
  assert.equal(readFileSync(join(REPO_ROOT, 'docs', 'long-lived.md'), 'utf8'), renderLongLivedMd(results), 'regenerate: npm run build && node dist/test/longlived/render-main.js (or re-measure with report-main.js)');
});

test('the results cover every pinned Envoy, both scenarios and every kind, with no lost message', () => {
  for (const e of pinnedEnvoys()) {
    for (const scenario of ['drain', 'rotate']) {
      const run = results.runs.find((r) => r.envoy === e.version && r.scenario === scenario);
      assert.ok(run, `${scenario} measured on Envoy ${e.version}`);
      assert.deepEqual(run.kinds.map((k) => k.kind), [...KINDS]);
      for (const k of run.kinds) {
        assert.equal(k.gaps, 0, `${scenario} ${e.version} ${k.kind}: no gap in the sequence numbers`);
        assert.ok(k.end, `${scenario} ${e.version} ${k.kind}: the end was seen`);
      }
    }
  }
});

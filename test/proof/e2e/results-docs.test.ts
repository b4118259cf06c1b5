import { forDocsDir, PROOF_DOC } from '../../support/docs-links';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pinnedEnvoys } from '../../support/real-envoy';
import { REPO_ROOT } from '../../support/repo';
import { README_MARKERS, renderReadmeProof, renderReadmeWhy, renderResultsMd } from '../harness/render';
import { readResults } from '../harness/results-file';

// docs/e2e/RESULTS.md and docs/proof.md's proof numbers are generated from one file,
// docs/e2e/results.json (npm run e2e:report writes all three). A hand edit to either document,
// or a results file committed without re-rendering, makes them disagree: this fails, and
// `npm run build && node dist/test/proof/e2e/render-main.js` puts them back in line.

const DOCS = join(REPO_ROOT, 'docs', 'e2e');
const results = readResults(join(DOCS, 'results.json'));
const HINT = 'regenerate with `npm run build && node dist/test/proof/e2e/render-main.js` (or measure anew with `npm run e2e:report`)';

function between(text: string, [begin, end]: readonly [string, string]): string {
  const i = text.indexOf(begin);
  const j = text.indexOf(end);
  assert.ok(i >= 0 && j > i, `docs/proof.md has the markers ${begin} ... ${end}`);
  return text
    .slice(i + begin.length, j)
    .replace(/^\n/, '')
    .replace(/\n$/, '');
}

test('docs/e2e/RESULTS.md is what results.json renders to', () => {
  assert.equal(readFileSync(join(DOCS, 'RESULTS.md'), 'utf8'), renderResultsMd(results), HINT);
});

test("docs/proof.md's proof section and race numbers are what results.json renders to", () => {
  const doc = readFileSync(PROOF_DOC, 'utf8');
  assert.equal(between(doc, README_MARKERS.proof), forDocsDir(renderReadmeProof(results)), HINT);
  assert.equal(between(doc, README_MARKERS.why), forDocsDir(renderReadmeWhy(results)), HINT);
});

test('the results cover every pinned Envoy, with measured race rates, and every timeline they name exists', () => {
  for (const e of pinnedEnvoys()) {
    assert.ok(
      results.generated.envoys.some((g) => g.version === e.version),
      `results.json was measured on Envoy ${e.version}`,
    );
    assert.ok(
      results.races[`Envoy ${e.version}`] && results.racesWithRetry[`Envoy ${e.version}`],
      `results.json has the repeats on Envoy ${e.version} (the tests' allowances read them)`,
    );
  }
  for (const r of results.runs) assert.ok(existsSync(join(DOCS, r.svg)), `${r.svg} exists`);
});

/**
 * docs/e2e/LOAD.md and docs/proof.md's load rows are what docs/e2e/load-results.json renders to (npm
 * run e2e:load measures and writes all three; `node dist/test/proof/load/load-main.js --render`
 * renders the committed file again). Reads files only.
 */
import { PROOF_DOC } from '../../support/docs-links';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fullRuns } from './plan-runs';
import { renderLoadMd, renderReadmeLoad } from './render';
import { LOAD_MD_FILE, readLoadResults } from './results';
import { runName } from './run';

const results = readLoadResults();
const HINT = 'regenerate with `npm run build && node dist/test/proof/load/load-main.js --render` (or measure anew: npm run e2e:load)';

test('docs/e2e/LOAD.md is what docs/e2e/load-results.json renders to', () => {
  assert.equal(renderLoadMd(results), readFileSync(LOAD_MD_FILE, 'utf8'), HINT);
});

test("docs/proof.md's load rows are what docs/e2e/load-results.json renders to", () => {
  const doc = readFileSync(PROOF_DOC, 'utf8');
  assert.equal(renderReadmeLoad(doc, results), doc, HINT);
});

test('the results hold every run the report makes, on every Envoy calibrated', () => {
  assert.ok(results.calibrations.length > 0);
  for (const c of results.calibrations) {
    assert.ok(c.limit > 0, `Envoy ${c.version}: a calibrated limit`);
    for (const cfg of fullRuns(c.version, 1))
      assert.ok(
        results.runs.some((r) => r.name === runName(cfg)),
        `docs/e2e/load-results.json has ${runName(cfg)}`,
      );
  }
});

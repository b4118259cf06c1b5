import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { renderLbModel } from './lb-model';

test('docs/lb-model.md is the LB behaviours as the code has them, every fact with its source', () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'lb-model.md'), 'utf8');
  assert.equal(doc, renderLbModel(), 'regenerate with `npm run build && node dist/test/lb/lb-model-main.js`');
  // The facts issue 48 asked to be looked up in the vendors' own documentation.
  assert.match(doc, /F5 pool reselect-tries: "Maximum number of attempts to find a responsive member for a connection", default 0/);
  assert.match(doc, /NetScaler request retry \(AppQoE retryOnReset, numRetries\)/);
  assert.match(doc, /an NLB routes each TCP connection to a single target for the life of the connection/);
  assert.match(doc, /^## Not known\n\n- F5, a request reset under it: /m);
});

import { forDocsDir } from '../support/docs-links';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { readResults } from '../proof/harness/results-file';
import { parseDurationDist } from '../../src/loss/duration-dist';
import { DEFAULT_CONNECT_MS } from '../../src/loss/inputs';
import { HAPROXY_RETRY_DELAY_MS } from '../../src/lb/haproxy/behaviour';
import { SIMULATE_LIMITS } from '../../src/simulate/simulate';
import { agreementBlock, exampleBlock, helpBlock, SIMULATE_MARKERS } from './docs-blocks';

// docs/simulate.md and the README's simulate section: the agreement numbers, the help and the
// example are generated (`npm run build && node dist/test/proof/e2e/render-main.js` rewrites them); the
// constants the prose names are the code's.

const HINT = 'regenerate with `npm run build && node dist/test/proof/e2e/render-main.js`';
const doc = readFileSync(join(REPO_ROOT, 'docs', 'simulate.md'), 'utf8');
const results = readResults(join(REPO_ROOT, 'docs', 'e2e', 'results.json'));

function between(text: string, [begin, end]: readonly [string, string]): string {
  const i = text.indexOf(begin);
  const j = text.indexOf(end);
  assert.ok(i >= 0 && j > i, `markers ${begin} ... ${end}`);
  return text
    .slice(i + begin.length, j)
    .replace(/^\n/, '')
    .replace(/\n$/, '');
}

test('docs/simulate.md states the agreement and the help as they are generated', () => {
  assert.equal(between(doc, SIMULATE_MARKERS.agreement), agreementBlock(results), HINT);
  assert.equal(between(doc, SIMULATE_MARKERS.help), helpBlock(), HINT);
});

test("docs/simulate.md's example is the command's real output, and its agreement count the same", () => {
  assert.equal(between(doc, SIMULATE_MARKERS.example), forDocsDir(exampleBlock(results)), HINT);
});

test("the grammar the docs show parses, and the numbers the prose names are the code's", () => {
  for (const [, dist] of doc.matchAll(/^\| `([^`]+)` \|/gm)) assert.doesNotThrow(() => parseDurationDist(dist!), dist);
  const L = SIMULATE_LIMITS;
  for (const fact of [
    `\`--rps\` at most ${L.rps.max}`,
    `\`--runs\` at most ${L.runs.max}`,
    `\`--pods\` ${L.pods.min}-${L.pods.max}`,
    `\`--connect-time\` at most ${L.connectMs.max} ms`,
    `at most ${L.warmupMs.max / 1000} s before the sequence`,
    `above ${L.workBudget / 1_000_000} million`,
    `default ${DEFAULT_CONNECT_MS} ms`,
    `times, ${HAPROXY_RETRY_DELAY_MS / 1000} s apart`,
  ])
    assert.ok(doc.includes(fact), `docs/simulate.md says '${fact}'`);
});

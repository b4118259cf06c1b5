import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { readResults } from '../proof/harness/results-file';
import { agreement, EXCLUDED, isKnownMiss, KNOWN_MISSES, repeatsAgreement, TOLERANCE_TEXT } from './harness-runs';

// The simulator against the end-to-end harness: every run of docs/e2e/results.json, mapped to the
// model's inputs (same LB setting, load and timings: harness-runs.ts), must come within the
// stated tolerance of the loss the harness measured, except the runs KNOWN_MISSES names.

const results = readResults(join(REPO_ROOT, 'docs', 'e2e', 'results.json'));
const rows = agreement(results);
const name = (r: (typeof rows)[number]): string => `${r.row.scenario} ${r.row.sequence} behind ${r.row.lbSetting} on ${r.row.proxy}`;

test(`every included run agrees with its measurement (${TOLERANCE_TEXT}), the known misses named`, () => {
  assert.equal(rows.length + EXCLUDED.length, results.runs.length, 'every measured run is compared or excluded by name');
  for (const r of rows) {
    const text = `${name(r)}: simulated ${r.simulatedMean.toFixed(2)}, measured ${r.measured}`;
    if (isKnownMiss(r.row)) {
      assert.equal(r.agrees, false, `${text}: a known miss now agrees; take it out of KNOWN_MISSES`);
      assert.ok(r.measured >= r.simulatedRange[0] && r.measured <= r.simulatedRange[1], `${text}: outside the simulated runs' middle 95 % too`);
    } else {
      assert.ok(r.agrees, text);
    }
  }
  assert.equal(KNOWN_MISSES.length, rows.filter((r) => isKnownMiss(r.row)).length, 'every known miss is a measured run');
});

test('the runs that lost most are predicted near what they lost: refused connects without redispatch, cuts at DOWN in the article order', () => {
  const noRedispatch = rows.filter((r) => r.row.termination === 'gracegate' && r.row.lbSetting === 'shutdown-sessions, no redispatch');
  assert.ok(noRedispatch.length >= 1);
  for (const r of noRedispatch) assert.ok(r.simulatedMean > 5 && r.measured > 5, name(r));
  const lossless = rows.filter((r) => r.row.termination === 'gracegate' && r.row.failureTotal === 0);
  for (const r of lossless) assert.ok(r.simulatedMean < 0.5, `${name(r)}: simulated ${r.simulatedMean}`);
});

test('the repeats of drain-first behind flush + redispatch, pooled: the rare connect cuts and listener-close races agree in sum', () => {
  const r = repeatsAgreement(results);
  assert.ok(r.terminations >= 30, `${r.terminations} terminations`);
  assert.ok(r.agrees, `simulated ${r.simulatedMean.toFixed(2)}, measured ${r.measured} in ${r.terminations} terminations`);
});

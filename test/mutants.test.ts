import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './support/repo';

/*
 * npm run mutants edits the compiled build by regular expressions (scripts/mutants.js). A refactor
 * that moves the code a mutant breaks would only be noticed when someone runs the mutants, which
 * take an hour; --check tries every edit against the current build at once, so a mutant that no
 * longer applies fails here, in every run of the suite.
 */
test('every mutant of npm run mutants applies once to the current build, and its test files exist', () => {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts', 'mutants.js'), '--check'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `scripts/mutants.js --check:\n${r.stderr}${r.stdout}`);
  const m = /^(\d+)\/(\d+) mutants apply/m.exec(r.stdout);
  assert.ok(m, r.stdout);
  assert.equal(m[1], m[2]);
  assert.ok(Number(m[2]) >= 20, `${m[2]} mutants listed; the list shrank`);
});

/**
 * docs/flakes.md is what docs/flakes.json renders to; every commit named as removing a flake is in
 * the history; the soak's parser finds the failures in node's own summary.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { REPO_ROOT } from '../support/repo';
import { FLAKES_MD, greenStreak, readFlakes, renderFlakesMd } from './flakes';
import { failuresIn, sampleAt } from './parse';

test('docs/flakes.md is what docs/flakes.json renders to (npm run soak -- --render)', () => {
  assert.equal(readFileSync(FLAKES_MD, 'utf8'), renderFlakesMd(readFlakes()));
});

test('every flake names its file, and every commit said to remove one is in the history', () => {
  for (const f of readFlakes().flakes) {
    assert.ok(f.file.startsWith('test/') && spawnSync('git', ['cat-file', '-e', `HEAD:${f.file}`], { cwd: REPO_ROOT }).status === 0, `${f.test}: ${f.file}`);
    assert.ok(f.seen.length > 0, f.test);
    if (f.fixedBy !== null) {
      assert.ok(f.cause, `${f.test}: removed by ${f.fixedBy} without a cause`);
      assert.equal(spawnSync('git', ['merge-base', '--is-ancestor', f.fixedBy, 'HEAD'], { cwd: REPO_ROOT }).status, 0, `${f.fixedBy} is not in HEAD's history`);
    }
  }
});

test("the soak finds each failure of node's spec summary once, with its file, name and assertion", () => {
  const out = [
    '▶ suite x',
    '  ✖ inner fails (1.1ms)',
    'ℹ fail 2',
    '✖ failing tests:',
    '',
    'test at /tmp/c/dist/test/hc/a.test.js:3:29',
    '✖ inner fails (1.099912ms)',
    '  AssertionError [ERR_ASSERTION]: one is not two',
    '  ',
    '  1 !== 2',
    '',
    'test at dist/test/proof/cluster/b.test.js:4:1',
    '✖ fails plain (0.1s)',
    '',
    '  Error: boom',
    '---- the cluster track ----',
    'test at dist/test/proof/cluster/b.test.js:4:1',
    '✖ fails plain (0.1s)',
    '  Error: boom',
  ];
  assert.deepEqual(failuresIn(out), [
    { file: 'dist/test/hc/a.test.js', test: 'inner fails', assertion: 'AssertionError [ERR_ASSERTION]: one is not two' },
    { file: 'dist/test/proof/cluster/b.test.js', test: 'fails plain', assertion: 'Error: boom' },
  ]);
  assert.deepEqual(failuresIn(['✖ inner fails (1ms)', '  AssertionError']), [], 'a failure outside the summary is not counted twice');
  assert.equal(
    sampleAt(
      [
        { atMs: 0, value: 1 },
        { atMs: 5000, value: 9 },
      ],
      3000,
    ),
    9,
  );
});

test('the green streak counts the last runs in a row that passed', () => {
  const run = (passed: boolean) => ({ soak: 's', run: 1, commit: 'c', seconds: 1, passed, loadAverage: { mean: 1, max: 1 }, failures: [] });
  assert.equal(greenStreak([run(true), run(false), run(true), run(true)]), 2);
  assert.equal(greenStreak([run(false)]), 0);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { computeSequences, renderSequences, SEQUENCE_DOCS, SEQUENCE_MARKERS, SEQUENCES_FILE, type SequencesFile } from './sequences';

// The README's and docs/facts.md's sequence tables are the model's numbers: docs/sequences.json is
// what the planner computes now, and each document's block is that file rendered.
const HINT = 'regenerate with `npm run build && node dist/test/plan/sequences-main.js`';
const file = JSON.parse(readFileSync(join(REPO_ROOT, SEQUENCES_FILE), 'utf8')) as SequencesFile;

test('docs/sequences.json is what the model computes now', () => {
  assert.deepEqual(file, computeSequences(), HINT);
});

test("each document's sequence table is docs/sequences.json rendered", () => {
  for (const doc of SEQUENCE_DOCS) {
    const text = readFileSync(join(REPO_ROOT, doc), 'utf8');
    const [begin, end] = SEQUENCE_MARKERS;
    const i = text.indexOf(begin);
    const j = text.indexOf(end);
    assert.ok(i >= 0 && j > i, `${doc} carries the markers`);
    assert.equal(text.slice(i + begin.length + 1, j - 1), renderSequences(file), `${doc}: ${HINT}`);
  }
});

test('the table says what the plan does: each row runs the order with its least loss', () => {
  for (const r of file.rows) {
    const runnable = Object.values(r.loss).filter((x): x is number => x !== null);
    assert.ok(r.loss[r.plan]! <= Math.min(...runnable) + 0.005, r.label);
  }
  // Each family: its vendors agree on the order.
  const byFamily = new Map<string, Set<string>>();
  for (const r of file.rows) byFamily.set(r.family, (byFamily.get(r.family) ?? new Set()).add(r.plan));
  assert.deepEqual(
    [...byFamily.entries()].map(([f, s]) => [f, [...s]]),
    [
      ['a "stop new" signal', ['soft-drain']],
      ['keeps sessions on DOWN', ['health-first']],
      ['cuts sessions, re-sends refused', ['drain-first']],
      ['cuts sessions, loses refused', ['health-first']],
    ],
  );
});

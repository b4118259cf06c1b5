/** The states' table (STATE_FACTS): what every party that answers, alerts on or reads a state relies on. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { FLOWS, STATE_FACTS, STATES, statesWhere, type Verdict } from '../../src/contract/hc';
import { REPO_ROOT } from '../support/repo';

const lbVerdicts = (s: (typeof STATES)[number]): Verdict[] => {
  const lb = STATE_FACTS[s].lb;
  return typeof lb === 'string' ? [lb] : FLOWS.map((f) => lb[f]);
};

test('one row per state, in the order of STATES', () => {
  assert.deepEqual(Object.keys(STATE_FACTS), [...STATES]);
});

test('readiness fails only where the LB already fails, in every flow: the EndpointSlice never leaves before the LB', () => {
  for (const s of STATES) {
    if (STATE_FACTS[s].readiness === 'fail') assert.deepEqual(new Set(lbVerdicts(s)), new Set(['fail']), s);
  }
});

test('the alerts find the states they watch: a fault and an end, each failing the LB and readiness', () => {
  for (const fact of ['fault', 'finished'] as const) {
    const states = statesWhere((f) => f[fact]);
    assert.ok(states.length > 0, `no state is ${fact}`);
    for (const s of states) assert.deepEqual([lbVerdicts(s), STATE_FACTS[s].readiness, STATE_FACTS[s].watch], [['fail'], 'fail', 'resting'], s);
  }
});

test('liveness passes in every state: restarting the sidecar cures none of them', () => {
  assert.deepEqual(
    statesWhere((f) => f.liveness === 'fail'),
    [],
  );
});

/** A verdict as docs/hc.md writes it. */
const WORDS: { readonly [V in Verdict]: string } = { pass: '200', fail: '503', soft: 'soft status' };

function lbCell(s: (typeof STATES)[number]): string {
  const lb = STATE_FACTS[s].lb;
  if (typeof lb === 'string') return WORDS[lb];
  const special = FLOWS.filter((f) => lb[f] !== 'fail').map((f) => `${f} ${WORDS[lb[f]]}`);
  return [...special, `else ${WORDS.fail}`].join(' · ');
}

test("docs/hc.md's table of states and answers says what STATE_FACTS says, one row per state", () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs/hc.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| `([A-Z]+)` \| [^|]+ \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$/gm)].map((m) => m.slice(1).map((c) => c!.trim()));
  assert.deepEqual(
    rows,
    STATES.map((s) => [s, lbCell(s), WORDS[STATE_FACTS[s].readiness], WORDS[STATE_FACTS[s].liveness]]),
  );
});

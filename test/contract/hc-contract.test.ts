import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { PATHS, SEQUENCES, STATES, TERMINATION_EVENTS } from '../../src/contract/hc';
import { planGateway } from '../../src/plan/plan-gateway';
import { resolved } from '../support/spec-builder';

const SRC = join(REPO_ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const full = join(dir, f);
    return statSync(full).isDirectory() ? sources(full) : f.endsWith('.ts') ? [full] : [];
  });
}

test('the planner-sidecar names are written once, in src/contract/hc.ts', () => {
  const names = [...Object.values(PATHS), ...TERMINATION_EVENTS.flatMap((e) => [e.key, e.name, e.title])];
  const offenders = sources(SRC)
    .filter((f) => relative(SRC, f) !== join('contract', 'hc.ts'))
    .flatMap((f) => {
      const text = readFileSync(f, 'utf8');
      return names.filter((n) => text.includes(`'${n}'`) || text.includes(`"${n}"`)).map((n) => `${relative(REPO_ROOT, f)}: '${n}'`);
    });
  assert.deepEqual(offenders, []);
});

test("the plan's timeline names the six events as the sidecar numbers them", () => {
  for (const sequence of SEQUENCES) {
    const lb =
      sequence === 'soft-drain'
        ? { model: 'haproxy', disableOn404: true }
        : { model: 'haproxy', onMarkedDown: sequence === 'drain-first' ? 'shutdown-sessions' : 'none', redispatch: true };
    const plan = planGateway(resolved({ spec: { loadBalancer: lb } }));
    assert.equal(plan.sequence, sequence);
    const events = plan.timeline.entries.filter((e) => e.event !== undefined);
    assert.deepEqual(events.map((e) => e.event).sort(), [1, 2, 3, 4, 5, 6]);
    for (const e of events) assert.equal(e.name, TERMINATION_EVENTS[e.event! - 1]!.title);
  }
  assert.deepEqual([...STATES], ['WARMING', 'OPEN', 'DRAINING', 'CLOSING', 'CLOSED', 'FAULT']);
});

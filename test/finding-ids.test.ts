import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { LINT_RULES, UNKNOWN_IGNORE_RULE } from '../src/lint/registry';
import { GATEWAY_RULES } from '../src/plan/findings';
import { planGateway } from '../src/plan/plan-gateway';
import { WORKLOAD_RULES } from '../src/plan/workload/findings';
import { parseGatewaySpec } from '../src/schema/parse-spec';
import { exampleSpecFiles } from './support/examples';
import { REPO_ROOT } from './support/repo';

/*
 * One findings engine (src/model/finding.ts) for the plan of a gateway, of a workload, and for lint:
 * each finding id is raised by exactly one rule, so `grep` on an id lands on the one file that
 * decides and words it. A rule shared by products (the rollout's, the grace period's) is written
 * once in src/model/ and listed by each product through forProduct; lint takes its id from there.
 */

const SRC = join(REPO_ROOT, 'src');

function sources(dir = SRC): Array<{ file: string; text: string }> {
  return readdirSync(dir).flatMap((f) => {
    const full = join(dir, f);
    if (statSync(full).isDirectory()) return sources(full);
    return f.endsWith('.ts') ? [{ file: relative(REPO_ROOT, full), text: readFileSync(full, 'utf8') }] : [];
  });
}

/** Every rule id the three products list. */
function ruleIds(): string[] {
  return [...new Set([...GATEWAY_RULES, ...WORKLOAD_RULES, ...LINT_RULES, UNKNOWN_IGNORE_RULE].map((r) => r.id))].sort();
}

test('every finding id appears in exactly one rule definition, and its quoted id in that file alone', () => {
  const files = sources();
  const ids = ruleIds();
  assert.ok(ids.length > 60, `the registries were read (${ids.length} ids)`);
  for (const id of ids) {
    const definitions = files.flatMap((f) => [...f.text.matchAll(new RegExp(`\\bid: '${id}'`, 'g'))].map(() => f.file));
    assert.equal(definitions.length, 1, `${id} is defined by ${definitions.length} rules: ${definitions.join(', ')}`);
    const quoted = files.filter((f) => f.text.includes(`'${id}'`) || f.text.includes(`"${id}"`) || f.text.includes(`\`${id}\``)).map((f) => f.file);
    assert.deepEqual(quoted, definitions, `'${id}' is quoted outside its rule`);
  }
});

test('no finding is raised outside a rule: every id a rule-like literal names in src/ is a listed rule', () => {
  const listed = new Set(ruleIds());
  const literals = sources().flatMap((f) => [...f.text.matchAll(/\bid: '([a-z0-9]+(?:-[a-z0-9]+)+)'/g)].map((m) => `${f.file}: ${m[1]}`));
  assert.deepEqual(
    literals.filter((l) => !listed.has(l.split(': ')[1]!)),
    [],
  );
});

test('each product lists an id once, and the ids the example plans raise are all listed', () => {
  for (const [product, rules] of [
    ['gateway', GATEWAY_RULES],
    ['workload', WORKLOAD_RULES],
    ['lint', [...LINT_RULES, UNKNOWN_IGNORE_RULE]],
  ] as const) {
    const ids = rules.map((r) => r.id);
    assert.equal(new Set(ids).size, ids.length, `${product}: ${ids.filter((id, i) => ids.indexOf(id) !== i).join(', ')}`);
  }
  const gateway = new Set(GATEWAY_RULES.map((r) => r.id));
  for (const file of exampleSpecFiles('GracefulGateway')) {
    const plan = planGateway(parseGatewaySpec(readFileSync(join(REPO_ROOT, 'examples', file), 'utf8'), file));
    for (const f of plan.findings) assert.ok(gateway.has(f.id), `${file}: ${f.id}`);
  }
});

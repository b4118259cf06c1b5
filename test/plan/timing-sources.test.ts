import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Derived } from '../../src/model/derived';
import { planGateway } from '../../src/plan/plan-gateway';
import { planWorkload } from '../../src/plan/workload/plan-workload';
import { parseAnySpec } from '../../src/schema/spec-kinds';
import { renderPlanText } from '../../src/emit/plan-text';
import { exampleSpecFiles } from '../support/examples';
import { REPO_ROOT } from '../support/repo';
import { resolved } from '../support/spec-builder';

/**
 * Every input of every timing formula carries its own source: an input that is another timing
 * cites that timing's own formula (never a reason borrowed from the formula it feeds), a spec
 * field is cited only where the user wrote it, and no two inputs of one formula share a source.
 */
function walk(what: string, derivations: Record<string, Derived>, given: ReadonlySet<string>): number {
  let inputs = 0;
  for (const [timing, d] of Object.entries(derivations)) {
    const seen = new Map<string, string>();
    for (const [name, input] of Object.entries(d.inputs)) {
      inputs++;
      const where = `${what}: ${timing}.${name}`;
      assert.ok(input.source.trim().length > 0, `${where} has a source`);
      const other = derivations[name];
      if (other !== undefined && name !== timing) {
        assert.equal(input.value, other.value, `${where} is the plan's ${name}`);
        assert.equal(input.source, `plan: ${other.formula}`, `${where} cites ${name}'s own formula`);
      }
      if (/^spec\.[\w.]+$/.test(input.source)) assert.ok(given.has(input.source), `${where} cites ${input.source}, which the spec sets`);
      const twin = seen.get(input.source);
      assert.equal(twin, undefined, `${where} and ${timing}.${twin} share the source '${input.source}'`);
      seen.set(input.source, name);
    }
  }
  return inputs;
}

const gatewayVariants: Array<[string, Parameters<typeof resolved>[0]]> = [
  ['the default spec', {}],
  [
    'a drain timeout override and Envoy drain override',
    { spec: { drain: { timeout: 40 }, envoy: { terminationDrainDurationSeconds: 150, drainDurationSeconds: 60 } } },
  ],
  ['no Prometheus and no safety margin', { spec: { observability: { prometheus: 'none' }, drain: { safetyMargin: 0 } } }],
];

test("every input of every gateway timing carries its own source (the bundled examples and the formulas' branches)", () => {
  let inputs = 0;
  for (const file of exampleSpecFiles('GracefulGateway')) {
    const r = parseAnySpec(readFileSync(join(REPO_ROOT, 'examples', file), 'utf8'), file);
    assert.equal(r.kind, 'GracefulGateway');
    if (r.kind === 'GracefulGateway') inputs += walk(file, planGateway(r.resolved).derivations, r.resolved.given);
  }
  for (const [what, overrides] of gatewayVariants) {
    const r = resolved(overrides);
    inputs += walk(what, planGateway(r).derivations, r.given);
  }
  assert.ok(inputs > 100, `walked ${inputs} inputs`);
});

test('every input of every workload timing carries its own source', () => {
  let inputs = 0;
  for (const file of exampleSpecFiles('GracefulWorkload')) {
    const r = parseAnySpec(readFileSync(join(REPO_ROOT, 'examples', file), 'utf8'), file);
    assert.equal(r.kind, 'GracefulWorkload');
    if (r.kind === 'GracefulWorkload') inputs += walk(file, planWorkload(r.resolved).derivations, r.resolved.given);
  }
  assert.ok(inputs > 5, `walked ${inputs} inputs`);
});

test("plan's text labels the grace period's inputs with their own sources, and the 30 s floor with its reason", () => {
  const plan = planGateway(resolved());
  const text = renderPlanText(plan, { width: 10_000 });
  const line = text.split('\n').find((l) => l.trim().startsWith('sequenceSeconds=') && l.includes('safetyMargin='));
  assert.ok(line, text);
  assert.match(line, new RegExp(`drainTimeoutSeconds=120 \\(plan: ${literal(plan.derivations.drainTimeoutSeconds.formula)}\\)`));
  assert.match(line, new RegExp(`lbBufferSeconds=10 \\(plan: ${literal(plan.derivations.lbBufferSeconds.formula)}\\)`));
  assert.match(line, /floorMargin=30 \(gracegate's floor: the pod outlives the longer of the held sequence and Envoy's own drain by 30 s/);
  assert.doesNotMatch(line, /\(plan \(floor/);
});

function literal(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

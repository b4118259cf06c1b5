import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import type { LintOptions } from '../../src/lint/context';
import type { LintFinding } from '../../src/lint/rule';
import { applyEdits, lintText, objectsByIdOf, streamOf, valueAt } from './helpers';

type Objects = ReturnType<typeof objectsByIdOf>;

const same = (a: LintFinding, b: LintFinding) => a.rule === b.rule && a.object === b.object && a.field === b.field;

/**
 * Advice never goes in a circle: each machine-applicable fix, applied alone, makes its finding go
 * away, and no finding it leaves asks to set a field it edited back to the value it had. Then the
 * fixes applied one after another reach a state with no fix left, never visiting a state twice.
 * Returns how many fixes were walked.
 */
export function walkFixes(text: string, options: LintOptions): number {
  const start = objectsByIdOf(text);
  const lint = (objects: Objects) => lintText(streamOf(objects), 'walk.yaml', options).findings;
  let walked = 0;
  for (const f of lint(start).filter((x) => x.fix)) {
    const objects = structuredClone(start);
    const before = f.fix!.edits.map((e) => ({ e, value: valueAt(objects, e.object, e.path) }));
    applyEdits(objects, f.fix!.edits);
    const after = lint(objects);
    assert.ok(!after.some((g) => same(f, g)), `${f.rule} on ${f.object} ${f.field} is still there after its own fix (${f.fix!.description})`);
    for (const g of after.filter((x) => x.fix)) {
      for (const e of g.fix!.edits) {
        for (const { e: mine, value } of before) {
          if (e.object !== mine.object || !isDeepStrictEqual(e.path, mine.path)) continue;
          const undoes = 'remove' in e ? value === undefined : isDeepStrictEqual(e.set, value);
          assert.ok(!undoes, `${g.rule}'s fix undoes ${f.rule}'s fix of ${mine.object} ${mine.path.join('.')}`);
        }
      }
    }
    walked++;
  }
  // All of them, one after another.
  let objects = structuredClone(start);
  const seen = new Set<string>([JSON.stringify(objects)]);
  for (let round = 0; ; round++) {
    const next = lint(objects).find((x) => x.fix);
    if (!next) break;
    assert.ok(round < 50, 'the fixes do not come to an end');
    objects = structuredClone(objects);
    applyEdits(objects, next.fix!.edits);
    const state = JSON.stringify(objects);
    assert.ok(!seen.has(state), `applying ${next.rule}'s fix returns to an earlier state: the advice goes in a circle`);
    seen.add(state);
  }
  return walked;
}

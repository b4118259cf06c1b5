/** Rewrites docs/timeline/*.svg from their example specs (see plan-pictures.ts). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { renderPlanSvg } from '../../src/emit/plan-svg';
import { example } from './helpers';
import { PLAN_PICTURES, picturePath } from './plan-pictures';

for (const p of PLAN_PICTURES) {
  mkdirSync(dirname(picturePath(p.file)), { recursive: true });
  writeFileSync(picturePath(p.file), renderPlanSvg(example(p.example).plan));
  process.stdout.write(`wrote ${p.file}\n`);
}

/** Writes docs/lb-model.md from the LB behaviours (test/lb/lb-model.ts). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { renderLbModel } from './lb-model';

writeFileSync(join(REPO_ROOT, 'docs', 'lb-model.md'), renderLbModel());
process.stderr.write('wrote docs/lb-model.md\n');

/** Rewrites docs/architecture.svg from LAYERS (see layers-svg.ts). Loading the test module runs its tests too. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './support/repo';
import { LAYERS } from './layers.test';
import { renderLayersSvg } from './layers-svg';

writeFileSync(join(REPO_ROOT, 'docs', 'architecture.svg'), renderLayersSvg(LAYERS));
process.stdout.write('wrote docs/architecture.svg\n');

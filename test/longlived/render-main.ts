/** Rewrites docs/long-lived.md from docs/long-lived-results.json: node dist/test/longlived/render-main.js */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { readLongLivedResults, renderLongLivedMd } from './render';

writeFileSync(join(REPO_ROOT, 'docs', 'long-lived.md'), renderLongLivedMd(readLongLivedResults(join(REPO_ROOT, 'docs', 'long-lived-results.json'))));
process.stdout.write('rewrote docs/long-lived.md from docs/long-lived-results.json\n');

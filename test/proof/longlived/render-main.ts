/** Rewrites docs/long-lived.md and docs/proof.md's long-lived section from docs/long-lived-results.json: node dist/test/proof/longlived/render-main.js */
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/repo';
import { readLongLivedResults, writeLongLivedDocs } from './render';

writeLongLivedDocs(readLongLivedResults(join(REPO_ROOT, 'docs', 'long-lived-results.json')));
process.stdout.write("rewrote docs/long-lived.md and docs/proof.md's long-lived section from docs/long-lived-results.json\n");

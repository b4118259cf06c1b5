/**
 * Rewrites docs/e2e/RESULTS.md, the runs' SVG timelines, docs/simulate.md's and docs/proof.md's generated
 * sections from docs/e2e/results.json, without running anything (the report script runs and measures):
 *   npm run build && node dist/test/proof/e2e/render-main.js
 */
import { PROOF_DOC } from '../../support/docs-links';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/run-cli';
import { renderReadme, renderResultsMd } from '../harness/render';
import { timelineSvg } from '../harness/report';
import { rewriteSimulateDocs } from '../../simulate/docs-blocks';
import { readResults } from '../harness/results-file';

const results = readResults(join(REPO_ROOT, 'docs', 'e2e', 'results.json'));
writeFileSync(join(REPO_ROOT, 'docs', 'e2e', 'RESULTS.md'), renderResultsMd(results));
// The runs' timelines, where the results keep what they draw (runs before the curves were kept have none).
for (const run of results.runs) {
  if (!run.timeline) continue;
  const { spanStartMs, spanEndMs, clientInFlight, podInFlight } = run.timeline;
  // The span stands for the load's and the termination's times: the axis runs over the same range.
  const input = { ...run, clientInFlight, podInFlight, loadStartMs: spanStartMs, loadEndMs: spanEndMs, terminationMs: spanStartMs };
  writeFileSync(join(REPO_ROOT, 'docs', 'e2e', run.svg), timelineSvg(input));
}
const readme = PROOF_DOC;
writeFileSync(readme, renderReadme(readFileSync(readme, 'utf8'), results));
rewriteSimulateDocs(REPO_ROOT, results);
process.stdout.write("rewrote docs/e2e/RESULTS.md, the runs' timelines, docs/simulate.md and docs/proof.md's end-to-end sections from docs/e2e/results.json\n");

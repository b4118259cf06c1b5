/**
 * Measures every scenario on every pinned Envoy and writes docs/long-lived-results.json and
 * docs/long-lived.md (about 10 s per Envoy):
 *   npm run build && node dist/test/longlived/report-main.js
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pinnedEnvoys } from '../support/real-envoy';
import { REPO_ROOT } from '../support/repo';
import { runScenario, type ScenarioResult } from './probe';
import { renderLongLivedMd, type LongLivedResults } from './render';

async function main(): Promise<void> {
  const runs: ScenarioResult[] = [];
  const envoys = pinnedEnvoys().map((e) => e.version);
  for (const scenario of ['drain', 'rotate'] as const) {
    for (const version of envoys) {
      process.stderr.write(`measuring ${scenario} on Envoy ${version}\n`);
      runs.push(await runScenario(version, scenario));
    }
  }
  const results: LongLivedResults = { generated: { at: new Date().toISOString().slice(0, 10), envoys }, runs };
  writeFileSync(join(REPO_ROOT, 'docs', 'long-lived-results.json'), `${JSON.stringify(results, null, 1)}\n`);
  writeFileSync(join(REPO_ROOT, 'docs', 'long-lived.md'), renderLongLivedMd(results));
  process.stdout.write('wrote docs/long-lived-results.json and docs/long-lived.md\n');
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});

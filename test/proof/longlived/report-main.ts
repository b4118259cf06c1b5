/**
 * Measures the long-lived kinds on every pinned Envoy and writes docs/long-lived-results.json,
 * docs/long-lived.md and docs/proof.md's long-lived section (all rendered by render.ts):
 *   npm run build && node dist/test/proof/longlived/report-main.js [--part probe|e2e|all]
 * probe: each kind against Envoy alone, drain and rotate (about 10 s per Envoy); e2e: one pod leaves
 * under load with reconnecting WebSocket/SSE clients, per termination order (e2e-table.ts, about
 * 15 s per run). A part not measured is kept from the results file as it was.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pinnedProxies } from '../harness/proxies';
import { pinnedEnvoys } from '../../support/real-envoy';
import { REPO_ROOT } from '../../support/repo';
import { E2E_SEQUENCES, runE2e, type E2eRun } from './e2e-table';
import { runScenario, type ScenarioResult } from './probe';
import { readLongLivedResults, writeLongLivedDocs, type LongLivedResults } from './render';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { part: { type: 'string', default: 'all' } } });
  const part = values.part!;
  if (!['probe', 'e2e', 'all'].includes(part)) throw new Error(`--part: '${part}' is not probe, e2e or all`);
  const file = join(REPO_ROOT, 'docs', 'long-lived-results.json');
  const old = existsSync(file) ? readLongLivedResults(file) : null;
  const envoys = pinnedEnvoys().map((e) => e.version);
  let runs: ScenarioResult[] = [...(old?.runs ?? [])];
  if (part !== 'e2e') {
    runs = [];
    for (const scenario of ['drain', 'rotate'] as const) {
      for (const version of envoys) {
        process.stderr.write(`measuring ${scenario} on Envoy ${version}\n`);
        runs.push(await runScenario(version, scenario));
      }
    }
  }
  let e2e: E2eRun[] = [...(old?.e2e ?? [])];
  if (part !== 'probe') {
    e2e = [];
    for (const proxy of pinnedProxies()) {
      for (const sequence of E2E_SEQUENCES) {
        process.stderr.write(`measuring end to end: ${sequence} on Envoy ${proxy.version}\n`);
        e2e.push(await runE2e(sequence, proxy));
      }
    }
  }
  const results: LongLivedResults = { generated: { at: new Date().toISOString().slice(0, 10), envoys }, runs, e2e };
  writeFileSync(file, `${JSON.stringify(results, null, 1)}\n`);
  writeLongLivedDocs(results);
  process.stdout.write("wrote docs/long-lived-results.json, docs/long-lived.md and docs/proof.md's long-lived section\n");
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});

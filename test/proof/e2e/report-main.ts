/**
 * The end-to-end report: runs every scenario on each pinned Envoy, repeats S5 drain-first to
 * measure the two races (with and without retry-on), and writes docs/e2e/results.json, one SVG
 * timeline per run, docs/e2e/RESULTS.md and docs/proof.md's generated sections (both rendered from
 * results.json by harness/render.ts).
 *   npm run e2e:report [-- --repeats N]     (default 30 repeats per configuration and Envoy)
 */
import { PROOF_DOC } from '../../support/docs-links';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pinnedEnvoys } from '../../support/real-envoy';
import { REPO_ROOT } from '../../support/run-cli';
import { haproxyVersion } from '../harness/haproxy';
import { istioProxy, pinnedProxies, proxyLabel, type ProxyChoice } from '../harness/proxies';
import { renderReadme, renderResultsMd } from '../harness/render';
import { timelineSvg } from '../harness/report';
import { formatResults, repeatSet, runRow, type RepeatSet, type ResultsFile, type RunRow } from '../harness/results-file';
import { runScenario, type ScenarioConfig, type ScenarioRun } from '../harness/scenario';
import { ENVOY_LB, ROLLING, S1, S3, S4, S5_GRACEGATE, S5_RETRY, S5_SEED } from '../harness/scenarios';
import { classifyFailures, describeRun, runSequenceProblems } from '../harness/expect';
import { rewriteSimulateDocs } from '../../simulate/docs-blocks';

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

const say = (text: string): void => {
  process.stderr.write(text);
};

async function repeat(cfg: ScenarioConfig, proxy: ProxyChoice, times: number): Promise<RepeatSet> {
  const runs: ScenarioRun[] = [];
  for (let i = 0; i < times; i++) {
    say(`report: ${cfg.setting.label}, ${proxyLabel(proxy)}, repeat ${i + 1}/${times} ... `);
    const run = await runScenario(cfg, proxy);
    runs.push(run);
    const c = classifyFailures(run);
    const failed = runSequenceProblems(run).length > 0;
    say(`${c.cutAtDown.length} cut, ${c.keepAliveRace.length} keep-alive race, ${c.other.length} other${failed ? ', SEQUENCE PROOF FAILED' : ''}\n`);
    // Every race and every failure is worth reading later: the account goes to the report's log.
    if (failed || run.result.failureTotal > 0) say(`${describeRun(run)}\n`);
  }
  return repeatSet(runs);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { repeats: { type: 'string', default: '30' } } });
  const repeats = Number(values.repeats);
  if (!Number.isInteger(repeats) || repeats < 1) throw new Error(`--repeats: '${values.repeats}' is not a positive integer`);
  const outDir = join(REPO_ROOT, 'docs', 'e2e');
  mkdirSync(outDir, { recursive: true });
  const started = Date.now();
  const istio = istioProxy();
  const plan: Array<[ScenarioConfig, ProxyChoice]> = [];
  for (const proxy of pinnedProxies()) {
    const baselines = proxyLabel(proxy) === proxyLabel(istio);
    for (const cfg of [...S1, ...S4, ...S5_GRACEGATE, ROLLING, ENVOY_LB]) if (cfg.termination === 'gracegate' || baselines) plan.push([cfg, proxy]);
    if (baselines) for (const cfg of [S3, ...S5_SEED]) plan.push([cfg, proxy]);
  }
  for (const name of readdirSync(outDir)) if (name.endsWith('.svg')) rmSync(join(outDir, name));
  const rows: RunRow[] = [];
  let backend = '';
  for (const [cfg, proxy] of plan) {
    say(`report: ${cfg.scenario} ${cfg.termination} behind ${cfg.setting.label}, ${proxyLabel(proxy)} ... `);
    const run = await runScenario(cfg, proxy);
    const svg = `${String(rows.length + 1).padStart(2, '0')}-${slug(`${run.result.scenario} ${run.result.sequence} ${run.result.lbSetting} ${run.result.proxy}`)}.svg`;
    writeFileSync(join(outDir, svg), timelineSvg(run.result));
    rows.push(runRow(run, svg));
    if (!backend && cfg === S5_GRACEGATE[0]) backend = run.lbConfig.slice(run.lbConfig.indexOf('# gracegate lb-config'));
    const failed = runSequenceProblems(run).length > 0;
    say(`${run.result.requests} requests, ${run.result.failureTotal} failed${failed ? ', SEQUENCE PROOF FAILED' : ''}\n`);
    if (failed || (cfg.termination === 'gracegate' && run.result.failureTotal > 0)) say(`${describeRun(run)}\n`);
  }
  const races: Record<string, RepeatSet> = {};
  const racesWithRetry: Record<string, RepeatSet> = {};
  for (const proxy of pinnedProxies()) {
    races[proxyLabel(proxy)] = await repeat(S5_GRACEGATE[0]!, proxy, repeats);
    racesWithRetry[proxyLabel(proxy)] = await repeat(S5_RETRY, proxy, repeats);
  }
  const results: ResultsFile = {
    generated: {
      date: new Date().toISOString().slice(0, 10),
      command: 'npm run e2e:report',
      node: process.version,
      cpus: cpus().length,
      seconds: Math.round((Date.now() - started) / 1000),
      haproxy: haproxyVersion(),
      envoys: pinnedEnvoys().map((e) => ({ version: e.version, role: e.role, why: e.why })),
    },
    runs: rows,
    races,
    racesWithRetry,
    backend,
  };
  writeFileSync(join(outDir, 'results.json'), formatResults(results));
  writeFileSync(join(outDir, 'RESULTS.md'), renderResultsMd(results));
  const readme = PROOF_DOC;
  writeFileSync(readme, renderReadme(readFileSync(readme, 'utf8'), results));
  rewriteSimulateDocs(REPO_ROOT, results);
  say(`wrote ${join(outDir, 'results.json')}, RESULTS.md, ${rows.length} timelines and docs/proof.md's generated sections in ${results.generated.seconds} s\n`);
}

// Exit when done: a handle the harness forgot must not keep a finished report alive.
main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);

/**
 * npm run e2e:load: calibrates the lab's highest steady rate on each pinned Envoy, runs every load
 * scenario at a share of it (load/plan-runs.ts), measures Envoy's CPU with and without the hc, and
 * writes docs/e2e/load-results.json, docs/e2e/LOAD.md and docs/proof.md's load rows.
 *   --render   renders the committed results file again, measuring nothing
 *   --only N   runs only the runs whose name contains N (results not written; printed)
 */
import { PROOF_DOC } from '../../support/docs-links';
import { writeFileSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { pinnedProxies } from '../harness/proxies';
import { calibrate, type Calibration } from './calibrate';
import { measureCpu } from './cpu';
import { fullRuns, LONG } from './plan-runs';
import { renderLoadMd, renderReadmeLoad } from './render';
import { LOAD_MD_FILE, LOAD_RESULTS_FILE, readLoadResults, type LoadResults } from './results';
import { LoadLab, runLoad, runName, type LoadRunResult } from './run';
import { requireTool, toolVersions } from './tools';
import { haproxyVersion } from '../harness/haproxy';

/** Runs ask for this share of the calibrated limit. */
export const HEADROOM = 0.6;
export const CALIBRATION_TARGETS = [250, 500, 1000, 1500, 2000, 3000, 4000, 5500, 7500, 10000, 14000];

function render(res: LoadResults): void {
  writeFileSync(LOAD_MD_FILE, renderLoadMd(res));
  writeFileSync(PROOF_DOC, renderReadmeLoad(readFileSync(PROOF_DOC, 'utf8'), res));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--render')) {
    render(readLoadResults());
    return;
  }
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
  for (const t of ['wrk', 'h2load', 'haproxy', 'go'] as const) requireTool(t);
  const started = Date.now();
  const loadavgAtStart = loadavg().map((n) => Math.round(n * 100) / 100);
  const versions = pinnedProxies().map((p) => p.version);
  const calibrations: Calibration[] = [];
  const runs: LoadRunResult[] = [];
  for (const version of versions) {
    const lab = await LoadLab.start('drain-first', version);
    let cal: Calibration;
    try {
      cal = await calibrate(lab, LONG, CALIBRATION_TARGETS, 4000, cpus().length);
    } finally {
      await lab.stop();
    }
    calibrations.push(cal);
    const rate = Math.max(100, Math.round(cal.limit * HEADROOM));
    console.error(`load: Envoy ${version}: limit ${cal.limit} req/s (${cal.steps.map((s) => `${s.target}->${s.achieved}`).join(' ')}), runs at ${rate} req/s`);
    for (const cfg of fullRuns(version, rate)) {
      if (only !== undefined && !runName(cfg).includes(only)) continue;
      const r = await runLoad(cfg);
      console.error(`load: ${r.name}: ${r.requests} requests, ${r.lost} lost, ${r.achievedShortRate} req/s short`);
      runs.push(r);
    }
  }
  if (only !== undefined) {
    console.log(JSON.stringify({ calibrations, runs }, null, 2));
    return;
  }
  const cpu = [];
  for (const version of versions)
    cpu.push(await measureCpu(version, Math.max(200, Math.round((calibrations.find((c) => c.version === version)?.limit ?? 500) * 0.5)), 5000));
  const tools = toolVersions();
  const res: LoadResults = {
    date: new Date().toISOString().slice(0, 10),
    machine: {
      cpus: cpus().length,
      loadavgAtStart,
      node: process.version,
      haproxy: haproxyVersion(),
      envoys: versions.map((v) => `Envoy ${v}`),
      wrk: tools.wrk,
      h2load: tools.h2load,
    },
    durationSeconds: Math.round((Date.now() - started) / 1000),
    headroom: HEADROOM,
    calibrations,
    runs,
    cpu,
  };
  writeFileSync(LOAD_RESULTS_FILE, `${JSON.stringify(res, null, 2)}\n`);
  render(res);
  console.error(`load: wrote ${LOAD_RESULTS_FILE}, ${LOAD_MD_FILE} and docs/proof.md's load rows in ${res.durationSeconds} s`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

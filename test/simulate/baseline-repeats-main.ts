/**
 * Repeats every baseline run of docs/e2e/results.json (S1 and S4 naive, S3, the four S5 article-order
 * runs) on the harness, each `--repeats` times (default 5), and writes their losses to
 * docs/e2e/baseline-repeats.json. A baseline run is one draw of a few losses: the simulator is set
 * against the mean of that run and its repeats (test/simulate/harness-runs.ts). About 6 minutes.
 *
 *   npm run build && node dist/test/simulate/baseline-repeats-main.js [--repeats N]
 */
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { istioProxy, proxyLabel } from '../proof/harness/proxies';
import { runScenario } from '../proof/harness/scenario';
import { S1, S3, S4, S5_SEED } from '../proof/harness/scenarios';
import { BASELINE_REPEATS_FILE, type BaselineRepeats } from './baseline-repeats';

async function main(): Promise<void> {
  const at = process.argv.indexOf('--repeats');
  const repeats = at > 0 ? Number(process.argv[at + 1]) : 5;
  if (!Number.isInteger(repeats) || repeats < 1 || repeats > 50) throw new Error('--repeats: a whole number from 1 to 50');
  const proxy = istioProxy();
  const configs = [...S1, S3, ...S4, ...S5_SEED].filter((c) => c.termination !== 'gracegate');
  const started = Date.now();
  const out: BaselineRepeats = {
    generated: {
      date: new Date().toISOString().slice(0, 10),
      command: 'node dist/test/simulate/baseline-repeats-main.js',
      cpus: cpus().length,
      seconds: 0,
      repeats,
    },
    runs: [],
  };
  for (const cfg of configs) {
    const failureTotals: number[] = [];
    for (let i = 0; i < repeats; i++) failureTotals.push((await runScenario(cfg, proxy)).result.failureTotal);
    out.runs.push({ scenario: cfg.scenario, termination: cfg.termination, lbSetting: cfg.setting.label, proxy: proxyLabel(proxy), failureTotals });
    process.stderr.write(`${cfg.scenario} ${cfg.termination} behind ${cfg.setting.label}: ${failureTotals.join(', ')}\n`);
  }
  out.generated.seconds = Math.round((Date.now() - started) / 1000);
  writeFileSync(join(REPO_ROOT, BASELINE_REPEATS_FILE), `${JSON.stringify(out, null, 1)}\n`);
  process.stderr.write(`wrote ${BASELINE_REPEATS_FILE}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);

/**
 * The generated parts of docs/simulate.md and the README's simulate section: the command's help,
 * an example run on the bundled HAProxy spec, and the agreement with the end-to-end harness (from
 * docs/e2e/results.json). `node dist/test/proof/e2e/render-main.js` writes them; test/simulate/docs.test.ts
 * fails when the committed documents differ.
 */
import { forDocsDir } from '../support/docs-links';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agreementSummary, spliceBetween } from '../proof/harness/render';
import type { ResultsFile } from '../proof/harness/results-file';
import { runCli } from '../support/run-cli';
import { agreement, AGREEMENT_RUNS, REPEAT_RUNS, repeatsAgreement, TOLERANCE_TEXT } from './harness-runs';

export const SIMULATE_MARKERS = {
  help: ['<!-- generated: gracegate simulate --help -->', '<!-- end simulate-help -->'],
  agreement: ['<!-- generated from docs/e2e/results.json: simulate-agreement -->', '<!-- end simulate-agreement -->'],
  example: ['<!-- generated: simulate-example -->', '<!-- end simulate-example -->'],
} as const;

/** The README's example: the bundled HAProxy spec (drain-first behind shutdown-sessions + redispatch). */
export const EXAMPLE_ARGS = ['simulate', 'examples/haproxy.yaml', '--rps', '200', '--duration-dist', 'lognormal:p50=80ms,p99=2s', '--runs', '100'];

function cli(args: string[]): string {
  const r = runCli(args);
  if (r.status !== 0) throw new Error(`gracegate ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stdout.trimEnd();
}

export function helpBlock(): string {
  return ['```', cli(['simulate', '--help']), '```'].join('\n');
}

export function agreementBlock(res: ResultsFile): string {
  const rows = agreement(res);
  const summary = agreementSummary(rows);
  const rep = repeatsAgreement(res);
  const redispatching = rows.filter((a) => a.row.lbCounters.wredis > 0);
  const wredis = redispatching.reduce((n, a) => n + a.row.lbCounters.wredis, 0);
  const simRedispatched = redispatching.reduce((n, a) => n + a.simulatedRedispatched, 0);
  return `Tolerance, stated before the comparison: ${TOLERANCE_TEXT}, the simulated mean taken over ${AGREEMENT_RUNS} runs of each measured run's settings. Against docs/e2e/results.json (${res.generated.date}, ${res.runs.length} runs on ${res.generated.envoys.map((e) => `Envoy ${e.version}`).join(' and ')}): ${summary.text}. Every row: docs/e2e/RESULTS.md, "Planner prediction against measurement". The repeats of S5 drain-first behind shutdown-sessions + redispatch (with and without retry-on, every Envoy), pooled because their losses are rare: ${rep.measured} lost in ${rep.terminations} terminations, simulated ${rep.simulatedMean.toFixed(2)} (the mean per termination over ${REPEAT_RUNS} runs per set, times its terminations), ${rep.agrees ? 'within' : '**outside**'} the same tolerance. One count the model does not match, and no tolerance is claimed for: HAProxy's redispatch counter (\`wredis\`) in the ${redispatching.length} runs where it redispatched sums to ${wredis}, the model's redispatched requests to ${simRedispatched.toFixed(1)} (ratio ${(wredis / Math.max(1e-9, simRedispatched)).toFixed(1)}), most of the gap in S1 and S4 with their two light clients. Losses do not depend on it (a redispatched request is served), but it means the model's split of requests between the pods while one drains is not HAProxy's; where redispatch is off, the refused requests it predicts do match.`;
}

export function exampleBlock(res: ResultsFile): string {
  const summary = agreementSummary(agreement(res));
  return [
    '```',
    `$ npx gracegate ${EXAMPLE_ARGS.map((a) => (/[^\w./:=-]/.test(a) ? `'${a}'` : a)).join(' ')}`,
    cli(EXAMPLE_ARGS),
    '```',
    '',
    `The model agrees with ${summary.agree} of ${summary.compared} end-to-end runs within its stated tolerance (${TOLERANCE_TEXT}); [docs/simulate.md](docs/simulate.md) says what it includes and leaves out, and which runs it misses.`,
    '',
    '<details><summary><code>gracegate simulate --help</code></summary>',
    '',
    helpBlock(),
    '',
    '</details>',
  ].join('\n');
}

/** Rewrites the generated blocks of docs/simulate.md, its example included (render-main and report-main call it). */
export function rewriteSimulateDocs(repoRoot: string, res: ResultsFile): void {
  const doc = join(repoRoot, 'docs', 'simulate.md');
  writeFileSync(
    doc,
    spliceBetween(spliceBetween(readFileSync(doc, 'utf8'), SIMULATE_MARKERS.agreement, agreementBlock(res)), SIMULATE_MARKERS.help, helpBlock()),
  );
  writeFileSync(doc, spliceBetween(readFileSync(doc, 'utf8'), SIMULATE_MARKERS.example, forDocsDir(exampleBlock(res))));
}

/**
 * The whole experiment at full scale (the experiment's own seconds; about 4 minutes): the eight
 * cells, gracegate's cells, the fixed-sleep alternative (its rollouts with and without waiting for
 * terminations), gracegate's plan for an app without graceful shutdown, and an exec preStop in a
 * distroless image. Writes docs/workloads-results.json and the tables in docs/workloads.md and
 * README.md made from it.
 *
 * Run: npm run build && node dist/test/proof/e2e-workload/report-main.js
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { experimentCells, extraCells, gracegateCells, type Cell } from './cells';
import { DOCS, generatedBlocks, RESULTS_FILE, withBlocks, type ResultsFile } from './results';
import { runCell, type CellResult } from './run-cell';

/** Cells run side by side (they sleep most of the time), one series at a time. */
async function batch(cells: Cell[], firstSeed: number): Promise<CellResult[]> {
  return Promise.all(
    cells.map((cell, i) =>
      runCell(cell, { scale: 1, seed: firstSeed + i }).then((r) => {
        process.stderr.write(`${r.id}: ${r.failures} failed of ${r.requests} (${JSON.stringify(r.counts)}), rollout ${r.rolloutSeconds} s\n`);
        return r;
      }),
    ),
  );
}

async function main(): Promise<void> {
  const all = [...experimentCells(), ...gracegateCells(), ...gracegateCells('serialised').filter((c) => c.series === 'long'), ...extraCells()];
  process.stderr.write(`running ${all.length} cells at full scale (about 4 minutes)\n`);
  const short = await batch(
    all.filter((c) => c.series === 'short'),
    100,
  );
  const long = await batch(
    all.filter((c) => c.series === 'long'),
    200,
  );
  const results: ResultsFile = {
    environment: {
      haproxy: execFileSync('haproxy', ['-v'], { encoding: 'utf8' }).split('\n')[0]!,
      node: process.version,
      machine: `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}`,
      command: 'npm run build && node dist/test/proof/e2e-workload/report-main.js',
      date: new Date().toISOString().slice(0, 10),
    },
    cells: [...short, ...long],
  };
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  const blocks = generatedBlocks(results);
  for (const doc of DOCS) writeFileSync(doc, withBlocks(readFileSync(doc, 'utf8'), blocks, doc));
  process.stderr.write(`wrote ${RESULTS_FILE} and the tables in ${DOCS.join(', ')}\n`);
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);

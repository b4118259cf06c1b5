/**
 * docs/benchmarks.json: what a benchmark printed the last time it ran with --write, with when and
 * where, and docs/benchmarks.md renders it between markers (test/docs-numbers.test.ts holds the page
 * to the file). A figure on the page comes from a run, never from a hand.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './repo';

export const BENCH_RESULTS = join(REPO_ROOT, 'docs', 'benchmarks.json');
export const BENCH_DOC = join(REPO_ROOT, 'docs', 'benchmarks.md');

export type BenchResult = { command: string; date: string; node: string; cpus: string; loadAverage: number; markdown: string };

export function readBenchResults(): Record<string, BenchResult> {
  return existsSync(BENCH_RESULTS) ? (JSON.parse(readFileSync(BENCH_RESULTS, 'utf8')) as Record<string, BenchResult>) : {};
}

/** Records a benchmark's printed Markdown under `name` (`node dist/bench/X.js --write`). */
export function writeBenchResult(name: string, command: string, markdown: string): void {
  const all = readBenchResults();
  all[name] = {
    command,
    date: new Date().toISOString().slice(0, 10),
    node: process.version,
    cpus: `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown'}`,
    loadAverage: Math.round(loadavg()[0]! * 10) / 10,
    markdown: markdown.trimEnd(),
  };
  writeFileSync(BENCH_RESULTS, `${JSON.stringify(all, null, 2)}\n`);
}

/** The block docs/benchmarks.md shows for one result. */
export function renderBench(r: BenchResult): string {
  return [`\`${r.command}\`, ${r.date}, Node ${r.node.replace(/^v/, '')}, ${r.cpus}, load average ${r.loadAverage} at the start:`, '', r.markdown, ''].join(
    '\n',
  );
}

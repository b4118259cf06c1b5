/**
 * docs/benchmarks.json: what a benchmark printed the last time it ran with --write, with when and
 * where, and the pages render it between `<!-- bench:NAME:begin -->` and `<!-- bench:NAME:end -->`
 * (docs/benchmarks.md, and any page of docs/ or the README that shows a benchmark's numbers;
 * test/docs-numbers.test.ts holds every page to the file). A figure on a page comes from a run,
 * never from a hand. An entry with `transcribed` holds a run from before its benchmark wrote this
 * file: its printed table, copied once from where it was recorded, and said so wherever it is shown
 * until the benchmark runs again with --write.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './repo';

export const BENCH_RESULTS = join(REPO_ROOT, 'docs', 'benchmarks.json');
export const BENCH_DOC = join(REPO_ROOT, 'docs', 'benchmarks.md');

export type BenchRun = { command: string; date: string; node: string; cpus: string; loadAverage: number; markdown: string };
/** A run recorded before its benchmark wrote this file: where its output was copied from, and what was recorded of its machine. */
export type BenchTranscribed = { command: string; transcribed: string; markdown: string };
export type BenchResult = BenchRun | BenchTranscribed;

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

/** The block a page shows for one result. */
export function renderBench(r: BenchResult): string {
  const head =
    'transcribed' in r
      ? `\`${r.command}\`, its last run before it wrote docs/benchmarks.json, as ${r.transcribed} (not re-run since):`
      : `\`${r.command}\`, ${r.date}, Node ${r.node.replace(/^v/, '')}, ${r.cpus}, load average ${r.loadAverage} at the start:`;
  return [head, '', r.markdown, ''].join('\n');
}

/** The README and every page of docs/: where bench blocks may stand. */
export function docPages(): string[] {
  return [
    join(REPO_ROOT, 'README.md'),
    ...readdirSync(join(REPO_ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => join(REPO_ROOT, 'docs', f)),
  ];
}

/** The names of the bench blocks on a page, in order. */
export const benchBlocks = (text: string): string[] => [...text.matchAll(/<!-- bench:([\w-]+):begin -->/g)].map((m) => m[1]!);

/**
 * With --write on the command line, records everything the benchmark prints to stdout from now on
 * under `name` when the process exits 0: for benchmarks that print as they go.
 */
export function writeOnExit(name: string, command: string): void {
  if (!process.argv.includes('--write')) return;
  const printed: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    printed.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return write(chunk, ...rest);
  }) as typeof process.stdout.write;
  process.on('exit', (code) => {
    if (code === 0) writeBenchResult(name, command, printed.join('').trim());
  });
}

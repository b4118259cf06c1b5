/**
 * docs/flakes.json: every full run the soak made (`npm run soak -- N`), every failure in them, and
 * the flakes seen since the reliability work began, each with its cause once found and the commit
 * that removed it. docs/flakes.md is rendered from it (renderFlakesMd), and a test holds the page to
 * the file.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';

export const FLAKES_FILE = join(REPO_ROOT, 'docs', 'flakes.json');
export const FLAKES_MD = join(REPO_ROOT, 'docs', 'flakes.md');

/** One failed test of one run, as the runner's summary named it. */
export type Failure = {
  /** The compiled test file, under dist/test/. */
  file: string;
  test: string;
  /** The assertion's first line. */
  assertion: string;
  /** The 1-minute load average sampled closest to when the runner printed the failure. */
  loadAverage: number;
};

/** One full run of `bash .ci/run` on a clean clone. */
export type SoakRun = {
  /** Which soak (its start, ISO) and which run of it (1-based). */
  soak: string;
  run: number;
  commit: string;
  seconds: number;
  passed: boolean;
  /** The 1-minute load average over the run: its mean and highest sample. */
  loadAverage: { mean: number; max: number };
  failures: Failure[];
  /** How the suite was run: the tracks and the cluster's lanes (absent in the earliest records). */
  mode?: string;
};

/** A flake: a test that failed where nothing it checks was broken. */
export type Flake = {
  test: string;
  /** Where it lives now (test/...). */
  file: string;
  /** When and where it was seen: a soak run ('2026-12-02T16:00:00Z #3'), or a CI or hand run named in words. */
  seen: string[];
  /** The timing assumption that failed, once found; null while unexplained. */
  cause: string | null;
  /** The commit that removed the cause, null while it is still there. */
  fixedBy: string | null;
};

export type FlakesFile = { runs: SoakRun[]; flakes: Flake[] };

export function readFlakes(file = FLAKES_FILE): FlakesFile {
  return JSON.parse(readFileSync(file, 'utf8')) as FlakesFile;
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The longest run of consecutive green runs at the end of the soak runs, and how many runs there were. */
export function greenStreak(runs: readonly SoakRun[]): number {
  let n = 0;
  for (let i = runs.length - 1; i >= 0 && runs[i]!.passed; i--) n++;
  return n;
}

export function renderFlakesMd(f: FlakesFile): string {
  const open = f.flakes.filter((x) => x.fixedBy === null);
  const lines = [
    '# Flakes',
    '',
    'Generated from `docs/flakes.json` by `npm run soak -- --render`; `npm run soak -- N` runs the whole',
    'suite N times back to back, each on a clean clone (`bash .ci/run` as CI runs it, with the environment',
    'the soak was given: GRACEGATE_TEST_TRACKS=parallel and GRACEGATE_CLUSTER_LANES=2 for side by side), and records every failure',
    'with the load average when it was printed.',
    '',
    `Soak runs recorded: ${f.runs.length}, ${f.runs.filter((r) => r.passed).length} green; the last ${greenStreak(f.runs)} in a row green.`,
    `Flakes seen: ${f.flakes.length}; removed: ${f.flakes.length - open.length}; still open: ${open.length}.`,
    '',
    '## Every flake seen, and its cause',
    '',
    '| test | file | seen | cause | removed by |',
    '|---|---|---|---|---|',
    ...f.flakes.map(
      (x) =>
        `| ${cell(x.test)} | \`${x.file}\` | ${cell(x.seen.join('; '))} | ${cell(x.cause ?? 'not explained yet')} | ${x.fixedBy ? `\`${x.fixedBy}\`` : 'still open'} |`,
    ),
    '',
    '## Soak runs',
    '',
    '| soak | run | commit | how | result | time | load average (mean, max) | failures |',
    '|---|---|---|---|---|---|---|---|',
    ...f.runs.map(
      (r) =>
        `| ${r.soak} | ${r.run} | \`${r.commit.slice(0, 7)}\` | ${r.mode ?? ''} | ${r.passed ? 'green' : 'red'} | ${Math.floor(r.seconds / 60)} min ${Math.round(r.seconds % 60)} s | ${r.loadAverage.mean.toFixed(1)}, ${r.loadAverage.max.toFixed(1)} | ${
          r.failures.length === 0 ? '' : cell(r.failures.map((x) => `${x.test} (\`${x.file}\`, load ${x.loadAverage.toFixed(1)}): ${x.assertion}`).join('; '))
        } |`,
    ),
    '',
  ];
  return lines.join('\n');
}

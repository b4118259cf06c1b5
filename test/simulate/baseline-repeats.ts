/** The baseline runs repeated on the harness (baseline-repeats-main.ts), as committed. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import type { RunRow } from '../proof/harness/results-file';

export const BASELINE_REPEATS_FILE = 'docs/e2e/baseline-repeats.json';

export type BaselineRepeats = {
  generated: { date: string; command: string; cpus: number; seconds: number; repeats: number };
  runs: Array<Pick<RunRow, 'scenario' | 'termination' | 'lbSetting' | 'proxy'> & { failureTotals: number[] }>;
};

export function readBaselineRepeats(): BaselineRepeats | null {
  const file = join(REPO_ROOT, BASELINE_REPEATS_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as BaselineRepeats) : null;
}

/** The repeats of one measured run, or [] when it has none. */
export function repeatsOf(repeats: BaselineRepeats | null, row: Pick<RunRow, 'scenario' | 'termination' | 'lbSetting' | 'proxy'>): number[] {
  return (
    repeats?.runs.find((r) => r.scenario === row.scenario && r.termination === row.termination && r.lbSetting === row.lbSetting && r.proxy === row.proxy)
      ?.failureTotals ?? []
  );
}

/**
 * docs/e2e/load-results.json: what `npm run e2e:load` measured, the one source of docs/e2e/LOAD.md
 * and the README's load rows (load/render.ts writes both from it; test/proof/load/load-docs.test.ts
 * checks they agree).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/repo';
import type { Calibration } from './calibrate';
import type { CpuRow } from './cpu';
import type { LoadRunResult } from './run';

export const LOAD_RESULTS_FILE = join(REPO_ROOT, 'docs/e2e/load-results.json');
export const LOAD_MD_FILE = join(REPO_ROOT, 'docs/e2e/LOAD.md');

export type LoadResults = {
  /** The day it ran (YYYY-MM-DD). */
  date: string;
  machine: { cpus: number; loadavgAtStart: number[]; node: string; haproxy: string; envoys: string[]; wrk: string; h2load: string };
  durationSeconds: number;
  /** Runs use this share of the calibrated limit. */
  headroom: number;
  calibrations: Calibration[];
  runs: LoadRunResult[];
  cpu: CpuRow[];
};

export function readLoadResults(file = LOAD_RESULTS_FILE): LoadResults {
  return JSON.parse(readFileSync(file, 'utf8')) as LoadResults;
}

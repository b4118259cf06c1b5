/**
 * Where cluster runs leave their summaries: one JSON file a run in .cache/cluster/results/ (the
 * last test run's), and docs/cluster/results.json (the committed measurement the docs and the
 * README are rendered from; written by report-main.ts).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/repo';
import { CLUSTER_DIR } from './layout';
import type { RunSummary } from './results';

export const LAST_RESULTS_DIR = join(CLUSTER_DIR, 'results');
export const RESULTS_FILE = join(REPO_ROOT, 'docs', 'cluster', 'results.json');

export function recordRun(summary: RunSummary): void {
  mkdirSync(LAST_RESULTS_DIR, { recursive: true });
  writeFileSync(join(LAST_RESULTS_DIR, `${summary.session}--${summary.action}.json`), `${JSON.stringify(summary, null, 2)}\n`);
}

export function lastRuns(): RunSummary[] {
  try {
    return readdirSync(LAST_RESULTS_DIR)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => JSON.parse(readFileSync(join(LAST_RESULTS_DIR, f), 'utf8')) as RunSummary);
  } catch {
    return [];
  }
}

/**
 * Where cluster runs leave their summaries: one JSON file a run in .cache/cluster/results/ (the
 * last test run's), and docs/cluster/results.json (the committed measurement the docs and the
 * README are rendered from; written by report-main.ts and start-half-main.ts through
 * writeClusterResults).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from '../../support/repo';
import { CLUSTER_DIR } from './layout';
import { renderClusterMd, renderReadmeWithCluster, type ClusterResults } from './render';
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

/** The committed docs/cluster/results.json, or undefined when there is none yet. */
export function readClusterResults(): ClusterResults | undefined {
  return existsSync(RESULTS_FILE) ? (JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) as ClusterResults) : undefined;
}

/** Renders docs/cluster.md and the README's real-cluster rows from `res`. */
export function renderDocs(res: ClusterResults): void {
  const docPath = join(REPO_ROOT, 'docs', 'cluster.md');
  writeFileSync(docPath, renderClusterMd(readFileSync(docPath, 'utf8'), res));
  const readmePath = join(REPO_ROOT, 'README.md');
  writeFileSync(readmePath, renderReadmeWithCluster(readFileSync(readmePath, 'utf8'), res));
}

/** Writes docs/cluster/results.json, then renders the documents from it. */
export function writeClusterResults(res: ClusterResults): void {
  mkdirSync(dirname(RESULTS_FILE), { recursive: true });
  writeFileSync(RESULTS_FILE, `${JSON.stringify(res, null, 2)}\n`);
  renderDocs(res);
}

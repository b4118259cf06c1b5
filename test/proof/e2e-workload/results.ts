/**
 * The results file of the 8-cell experiment (docs/workloads-results.json, written by
 * report-main.ts) and the two tables made from it, which docs/workloads.md carries between
 * markers. A test renders the tables from the file and checks the document agrees.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/repo';
import type { CellResult } from './run-cell';

export const RESULTS_FILE = join(REPO_ROOT, 'docs', 'workloads-results.json');
export const DOCS = [join(REPO_ROOT, 'docs', 'workloads.md')];

export type ResultsFile = {
  /** What ran: machine, versions, the command. */
  environment: { haproxy: string; node: string; machine: string; command: string; date: string };
  cells: CellResult[];
};

export function readResults(): ResultsFile {
  return JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) as ResultsFile;
}

/**
 * What the experiment's write-up says of each of its cells. It states S3 and L2 (its table is an
 * image); the others follow from its conclusion: short requests need the preStop, long ones need
 * graceful shutdown, and both together are its recommendation.
 */
export const EXPERIMENT_OUTCOME: Record<string, string> = {
  S1: 'fails (implied)',
  S2: 'fails: preStop needed (implied)',
  S3: 'almost no failures (stated)',
  S4: 'no failures (recommended)',
  L1: 'fails (implied)',
  L2: 'almost no failures (stated)',
  L3: 'fails: graceful needed (implied)',
  L4: 'no failures (recommended)',
};

const BEGIN = (name: string) => `<!-- ${name}:begin (generated from docs/workloads-results.json by test/proof/e2e-workload/report-main.ts; do not edit) -->`;
const END = (name: string) => `<!-- ${name}:end -->`;

function row(cells: Array<string | number>): string {
  return `| ${cells.join(' | ')} |`;
}

function appText(c: CellResult): string {
  return c.graceful ? `graceful (timeout ${c.shutdownTimeoutSeconds} s)` : 'exits at once';
}

/** The cells' failures by kind, the experiment's eight first, beside what the experiment reported. */
export function cellsTable(results: ResultsFile): string {
  const head = [
    'cell',
    'requests',
    'preStop',
    'app on SIGTERM',
    'grace',
    'sent',
    'refused/reset',
    '5xx',
    'cut',
    'timeout',
    'failed',
    'closed pod in the rules',
    'the experiment',
  ];
  const lines = [row(head), row(head.map(() => '---'))];
  const ordered = [...results.cells].sort((a, b) => order(a.id) - order(b.id));
  for (const c of ordered) {
    const name = c.id in EXPERIMENT_OUTCOME ? `${c.id} ${c.label}` : `${c.id}: ${c.label}`;
    lines.push(
      row([
        name,
        c.series === 'short' ? '500 ms' : '20-40 s',
        c.preStop,
        appText(c),
        `${c.terminationGracePeriodSeconds} s`,
        c.requests,
        c.counts.refusedReset,
        c.counts.http5xx,
        c.counts.cut,
        c.counts.timeout,
        `**${c.failures}**`,
        `${c.closedInRulesSeconds} s${c.noneListeningSeconds > 0 ? ` (none open: ${c.noneListeningSeconds} s)` : ''}`,
        EXPERIMENT_OUTCOME[c.id] ?? 'not in the experiment',
      ]),
    );
  }
  return lines.join('\n');
}

function order(id: string): number {
  const known = [
    'S1',
    'S2',
    'S3',
    'S4',
    'L1',
    'L2',
    'L3',
    'L4',
    'G-short',
    'G-long',
    'D-short',
    'G-long-ungraceful',
    'F-long',
    'G-long-serialised',
    'F-long-serialised',
  ];
  const at = known.indexOf(id);
  return at < 0 ? known.length : at;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
const round = (x: number) => Math.round(x * 10) / 10;

/** One cell's per-pod numbers: readiness of the new pods, termination of the old ones. */
export function podNumbers(c: CellResult): { ready: number; termination: number; terminationMax: number } {
  const ready = c.pods.filter((p) => p.role === 'new' && p.readySeconds !== null).map((p) => p.readySeconds!);
  const term = c.pods.filter((p) => p.role === 'old' && p.terminationSeconds !== null).map((p) => p.terminationSeconds!);
  return { ready: round(mean(ready)), termination: round(mean(term)), terminationMax: round(Math.max(...term)) };
}

/**
 * A rollout of `replicas` pods from one cell's per-pod numbers: with room for the surge pod, the
 * terminations overlap (each step waits for the new pod's readiness, the rollout for the last
 * termination); when each step waits for the old pod to be gone, every step adds a termination.
 */
export function projectRollout(c: CellResult, replicas: number): { overlap: number; serialised: number } {
  const n = podNumbers(c);
  return { overlap: round(replicas * n.ready + n.terminationMax), serialised: round(replicas * (n.ready + n.termination)) };
}

function minutes(seconds: number): string {
  return `${seconds} s (${round(seconds / 60)} min)`;
}

/** gracegate's rollout beside the fixed-sleep alternative, measured on 2 replicas and projected to 20. */
export function rolloutTable(results: ResultsFile): string {
  const byId = new Map(results.cells.map((c) => [c.id, c]));
  const lines = [
    row([
      'long requests (20-40 s)',
      'failed',
      'pod termination (mean)',
      'rollout of 2, overlapping',
      'rollout of 2, each step waits',
      '20 replicas, overlapping',
      '20 replicas, each step waits',
    ]),
    row(Array(7).fill('---')),
  ];
  for (const [id, serialisedId, label] of [
    ['G-long', 'G-long-serialised', 'gracegate: sleep 5 + graceful drain'],
    ['F-long', 'F-long-serialised', 'fixed: exec sleep 50, no graceful'],
  ] as const) {
    const c = byId.get(id);
    const s = byId.get(serialisedId);
    if (!c || !s) continue;
    const p = projectRollout(c, 20);
    lines.push(
      row([
        label,
        c.failures + s.failures,
        `${podNumbers(c).termination} s`,
        `${c.rolloutSeconds} s`,
        `${s.rolloutSeconds} s`,
        minutes(p.overlap),
        minutes(p.serialised),
      ]),
    );
  }
  return lines.join('\n');
}

/** The generated blocks, by marker name. */
export function generatedBlocks(results: ResultsFile): Record<string, string> {
  return { 'workload-cells': cellsTable(results), 'workload-rollout': rolloutTable(results) };
}

/** Puts each block between its markers in `text`; throws when a document lacks a marker pair. */
export function withBlocks(text: string, blocks: Record<string, string>, what: string): string {
  let out = text;
  for (const [name, body] of Object.entries(blocks)) {
    const begin = out.indexOf(`<!-- ${name}:begin`);
    const end = out.indexOf(END(name));
    if (begin < 0 || end < begin) throw new Error(`${what} has no ${name} markers`);
    out = `${out.slice(0, begin)}${BEGIN(name)}\n${body}\n${out.slice(end)}`;
  }
  return out;
}

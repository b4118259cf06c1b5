/**
 * docs/hc.md's table of the pipelining benchmark, rendered from docs/bench/hc-pipeline-results.json
 * (written by bench/hc-pipeline-bench.ts --json): the doc and the figures cannot disagree
 * (test/hc/pipeline-docs.test.ts holds the doc to this rendering).
 */
import { blockIn } from './marker-block';

type ResultRow = { attack: string; failed: number; p99: number; ratio: number | null };
type Run = { label: string; rows: ResultRow[]; rounds?: number };
export type PipelineResults = { before: Run; after: Run; renewed: Run };

export const TABLE_BEGIN = '<!-- hc-pipeline table: rendered from docs/bench/hc-pipeline-results.json (bench/hc-pipeline-table.ts) -->';
export const TABLE_END = '<!-- end hc-pipeline table -->';

const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(1) : '-');

export function pipelineTable(results: PipelineResults): string {
  const byAttack = (run: Run) => new Map(run.rows.map((r) => [r.attack, r]));
  const [before, after, renewed] = [byAttack(results.before), byAttack(results.after), byAttack(results.renewed)];
  const probes = (run: Run) => 100 * (run.rounds ?? 1);
  const lines = [
    `| attack | failed of ${probes(results.before)}, before | p99 ms, before | failed of ${probes(results.after)}, after | p99 ms, after | failed of ${probes(results.renewed)}, renewed | p99 ms, renewed | p99 / unattacked, renewed |`,
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const { attack } of results.before.rows) {
    const [b, a, r] = [before.get(attack), after.get(attack), renewed.get(attack)];
    if (!b || !a || !r) throw new Error(`docs/bench/hc-pipeline-results.json: '${attack}' is missing from a run`);
    lines.push(
      `| ${attack} | ${b.failed} | ${ms(b.p99)} | ${a.failed} | ${ms(a.p99)} | ${r.failed} | ${ms(r.p99)} | ${r.ratio === null ? '-' : r.ratio.toFixed(2)} |`,
    );
  }
  return `${TABLE_BEGIN}\n${lines.join('\n')}\n${TABLE_END}`;
}

/** The block of `doc` between the markers (markers included), or undefined. */
export function tableIn(doc: string): string | undefined {
  return blockIn(doc, TABLE_BEGIN, TABLE_END);
}

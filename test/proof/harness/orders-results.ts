/**
 * docs/e2e/orders-results.json (issue 48): every order behind each LB family, on real HAProxy and
 * real Envoy pods, repeated; rendered into docs/simulate.md beside the model's prediction for the
 * same runs (the agreement table's tolerance), and with the order the plan runs behind each family.
 * `npm run build && node dist/test/proof/e2e/orders-main.js [REPEATS]` measures and writes it;
 * test/simulate/orders-docs.test.ts holds the document to the file.
 */
import { readFileSync } from 'node:fs';
import type { Sequence } from '../../../src/contract/hc';
import { planGateway } from '../../../src/plan/plan-gateway';
import { resolveGatewaySpec } from '../../../src/schema/parse-spec';
import { quantile, simulateRuns } from '../../../src/simulate/simulate';
import { configInputs, TOLERANCE_TEXT, withinTolerance } from '../../simulate/harness-runs';
import { labSpec } from './scenario';
import { ORDER_FAMILIES, ORDER_RUNS, type OrderFamily } from './scenarios';

export type OrdersRun = {
  family: string;
  order: Sequence;
  proxy: string;
  /** Failed requests of each repeat, and requests sent. */
  lost: number[];
  requests: number[];
  /** Of the failures, per repeat: cut at DOWN, keep-alive race, the rest (refused, cut at exit). */
  classes: Array<{ cutAtDown: number; keepAliveRace: number; other: number }>;
};

export type OrdersResults = {
  generated: { date: string; command: string; node: string; cpus: number; seconds: number; haproxy: string };
  repeats: number;
  runs: OrdersRun[];
};

export function readOrdersResults(path: string): OrdersResults {
  return JSON.parse(readFileSync(path, 'utf8')) as OrdersResults;
}

/** The order the plan runs behind a family: its lab spec planned without spec.sequence. */
export function planOrderOf(f: OrderFamily): Sequence {
  return planGateway(resolveGatewaySpec(labSpec({ label: f.family, lb: f.lb }, 2))).sequence;
}

/** Simulated runs per measured configuration, and the key: the table is reproducible. */
export const ORDERS_SIM_RUNS = 300;
const SIM_KEY = 48;

export type OrdersRow = {
  family: OrderFamily;
  order: Sequence;
  proxy: string;
  measuredMean: number;
  lost: number[];
  simulatedMean: number;
  simulatedRange: [number, number];
  agrees: boolean;
};

/** Each measured configuration with the model's prediction for its settings and load (closed-loop clients, as the harness). */
export function ordersRows(res: OrdersResults): OrdersRow[] {
  return res.runs.map((run, i) => {
    const family = ORDER_FAMILIES.find((f) => f.family === run.family)!;
    const { inputs } = configInputs(ORDER_RUNS.find((r) => r.family === family && r.order === run.order)!.cfg);
    const losses = simulateRuns(inputs, ORDERS_SIM_RUNS, SIM_KEY * 1000 + i).map((o) => o.lost);
    const simulatedMean = losses.reduce((a, b) => a + b, 0) / losses.length;
    const measuredMean = run.lost.reduce((a, b) => a + b, 0) / Math.max(1, run.lost.length);
    return {
      family,
      order: run.order,
      proxy: run.proxy,
      measuredMean,
      lost: run.lost,
      simulatedMean,
      simulatedRange: [quantile(losses, 0.025), quantile(losses, 0.975)],
      agrees: withinTolerance(simulatedMean, measuredMean),
    };
  });
}

const n2 = (n: number): string => n.toFixed(2);

/** The block docs/simulate.md carries. */
export function renderOrders(res: OrdersResults): string {
  const rows = ordersRows(res);
  const families = ORDER_FAMILIES.map((f) => {
    const mine = rows.filter((r) => r.family === f);
    const planOrder = planOrderOf(f);
    const least = [...mine].sort((a, b) => a.measuredMean - b.measuredMean)[0];
    return { f, planOrder, least: least?.order };
  });
  const agree = rows.filter((r) => r.agrees).length;
  return [
    `Every order behind each LB family (docs/e2e/orders-results.json, ${res.generated.date}: ${res.repeats} run(s) of each on ${[...new Set(rows.map((r) => r.proxy))].join(' and ')} behind ${res.generated.haproxy}; S5's load of 12 closed-loop clients, one pod leaves; the order forced with spec.sequence). "measured" is the failed requests of each run; "simulated" the model's mean over ${ORDERS_SIM_RUNS} runs of the same settings and load (95 % of runs within the range). Tolerance, as above: ${TOLERANCE_TEXT}, on the mean of the runs. ${agree} of ${rows.length} agree.`,
    '',
    '| LB family (stands for) | order | the plan runs | measured (per run) | measured mean | simulated mean (95 % range) | agrees |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const planOrder = families.find((x) => x.f === r.family)!.planOrder;
      return `| ${r.family.family} (${r.family.standsFor}) | ${r.order} | ${r.order === planOrder ? 'yes' : ''} | ${r.lost.join(', ')} | ${n2(r.measuredMean)} | ${n2(r.simulatedMean)} (${r.simulatedRange[0]}-${r.simulatedRange[1]}) | ${r.agrees ? 'yes' : '**no**'} |`;
    }),
    '',
    ...families.map(
      ({ f, planOrder, least }) =>
        `- ${f.family}: the plan runs ${planOrder}; in the real runs ${least === planOrder ? 'it lost the least' : `**${least} lost less**`}.`,
    ),
  ].join('\n');
}

export const ORDERS_MARKERS = ['<!-- generated from docs/e2e/orders-results.json: orders-agreement -->', '<!-- end orders-agreement -->'] as const;

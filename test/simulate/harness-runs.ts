/**
 * The end-to-end harness's runs as the simulator's inputs: the same LB setting (the lab spec of
 * test/proof/harness/scenario.ts, planned by the real planner), the same load (12 or 2 closed-loop
 * keep-alive workers with the mixes of src/verify/mixes.ts, S1's long request and S4's stream) and
 * the same compressed timings. `agreement` sets the simulated loss beside what the harness measured
 * (docs/e2e/results.json), with the tolerance stated once here.
 */
import { planGateway, type Plan } from '../../src/plan/plan-gateway';
import { resolveGatewaySpec } from '../../src/schema/parse-spec';
import type { LoadOptions, RequestSpec } from '../../src/verify/load';
import type { DurationDist } from '../../src/loss/duration-dist';
import { DEFAULT_CONNECT_MS, lbInputs, podInputs } from '../../src/loss/inputs';
import { idleConnectionsAtClose, type RunInputs } from '../../src/loss/model';
import type { TerminationOrder } from '../../src/loss/orders';
import { quantile, simulateRuns, warmupMs } from '../../src/simulate/simulate';
import type { RepeatSet, ResultsFile, RunRow } from '../proof/harness/results-file';
import { labSpec, type ScenarioConfig } from '../proof/harness/scenario';
import { ENVOY_LB, ROLLING, S1, S3, S4, S5_GRACEGATE, S5_RETRY, S5_SEED } from '../proof/harness/scenarios';
import type { Termination } from '../proof/harness/result';
import { readBaselineRepeats, repeatsOf, type BaselineRepeats } from './baseline-repeats';

/** Monte Carlo runs per measured run, and the key: the table is reproducible. */
export const AGREEMENT_RUNS = 300;
export const AGREEMENT_KEY = 17;

/**
 * The tolerance, fixed before looking at the simulated numbers: the simulated mean loss per run
 * must lie within max(1, half the measured loss) of the measured loss. One run of a few hundred
 * requests is one draw: a count of 0 or 1 cannot be told from a mean of 0.5, hence the floor of 1.
 */
export function withinTolerance(simulatedMean: number, measured: number): boolean {
  return Math.abs(simulatedMean - measured) <= Math.max(1, 0.5 * measured);
}
export const TOLERANCE_TEXT = '|simulated mean - measured| <= max(1, 0.5 x measured) per run';

/**
 * gracegate's `drain` starts its sequence 0.25-0.6 s after the pod's deletion (measured by the
 * harness, test/proof/harness/scenarios.ts), so S1's and S4's request, started 0.15 s before the
 * deletion, began that much earlier on the sequence's clock. The baselines' scripts act at once.
 */
const GRACEGATE_START_LAG_MS = { min: 250, max: 600 };

const CONFIGS: ScenarioConfig[] = [...S1, S3, ...S4, ...S5_GRACEGATE, S5_RETRY, ROLLING, ENVOY_LB, ...S5_SEED];

/** Runs the model cannot stand for, by name, with the reason; none at present. */
export const EXCLUDED: Array<{ scenario: string; reason: string }> = [];

/**
 * The measured runs outside the tolerance, named so that the count the documents state cannot
 * drift: agreement.test.ts fails when one of them comes inside, or another one falls out. A
 * baseline is compared by the mean of its run and its repeats (docs/e2e/baseline-repeats.json).
 */
export const KNOWN_MISSES: Array<Pick<RunRow, 'scenario' | 'termination' | 'lbSetting' | 'proxy'> & { why: string }> = [
  {
    scenario: 'S4',
    termination: 'naive',
    lbSetting: 'shutdown-sessions + redispatch',
    proxy: 'Envoy 1.36.4',
    why: 'the model cuts the stream in every run and, beside it, the light background requests in flight at DOWN; the harness lost the stream every time but a background request in only one of six runs, so the model counts about one request too many here',
  },
];

export function isKnownMiss(row: RunRow): boolean {
  return KNOWN_MISSES.some((m) => m.scenario === row.scenario && m.termination === row.termination && m.lbSetting === row.lbSetting && m.proxy === row.proxy);
}

const ORDER_OF: Record<Exclude<Termination, 'gracegate'>, TerminationOrder> = {
  naive: 'naive-503',
  'naive-listeners-stopped': 'naive-503-listeners-stopped',
  seed: 'article-order',
};

export function requestMs(spec: RequestSpec): number {
  return spec.kind === 'slow' ? spec.ms : spec.chunks * spec.intervalMs;
}

/** A load mix as the simulator's length distribution: a weighted mix of fixed lengths. */
export function mixDist(mix: LoadOptions['mix']): DurationDist {
  const total = mix.reduce((s, m) => s + m.weight, 0);
  const parts = mix.map((m) => ({ weight: m.weight / total, shape: { kind: 'fixed' as const, ms: requestMs(m.spec) } }));
  return { text: parts.map((p) => `${Number(p.weight.toFixed(4))}*fixed:${p.shape.ms}ms`).join('+'), parts };
}

function configOf(row: Pick<RunRow, 'scenario' | 'termination' | 'lbSetting'>): ScenarioConfig {
  const cfg = CONFIGS.find((c) => c.scenario === row.scenario && c.termination === row.termination && c.setting.label === row.lbSetting);
  if (!cfg) throw new Error(`no harness scenario for ${row.scenario} ${row.termination} behind ${row.lbSetting}`);
  return cfg;
}

export type HarnessInputs = { inputs: RunInputs; terminations: number; plan: Plan };

/** The simulator's inputs for one measured run. */
export function harnessInputs(row: Pick<RunRow, 'scenario' | 'termination' | 'lbSetting'>): HarnessInputs {
  return configInputs(configOf(row));
}

/** The simulator's inputs for a run of `cfg`: its lab spec planned, its load, its LB setting. */
export function configInputs(cfg: ScenarioConfig): HarnessInputs {
  const plan = planGateway(resolveGatewaySpec(labSpec(cfg.setting, cfg.pods)));
  const steady = cfg.load.steady!;
  const durations = mixDist(steady.mix);
  const order = cfg.termination === 'gracegate' ? plan.sequence : ORDER_OF[cfg.termination];
  const singles = (cfg.load.requests ?? []).map((r) => ({ atMs: r.atMs - cfg.leaveAtMs, ms: requestMs(r.spec) }));
  return {
    plan,
    // A rolling replacement takes its pods out one after another, each beside the others.
    terminations: cfg.rolling ? cfg.pods : 1,
    inputs: {
      pods: cfg.pods,
      // The harness runs the backend lb-config wrote for the plan's sequence, whatever the termination.
      lb: lbInputs(plan.loadBalancer, plan.sequence),
      pod: podInputs(plan.timings),
      order,
      traffic: { kind: 'workers', workers: steady.workers },
      durations,
      singles,
      ...(cfg.termination === 'gracegate' && singles.length > 0 ? { singlesLeadMs: GRACEGATE_START_LAG_MS } : {}),
      warmupMs: warmupMs(durations),
      idleAtClose: idleConnectionsAtClose({ kind: 'workers', workers: steady.workers }, durations, cfg.pods, DEFAULT_CONNECT_MS),
    },
  };
}

export type AgreementRow = {
  row: RunRow;
  order: TerminationOrder;
  simulatedMean: number;
  /** The middle 95 % of the simulated runs' losses: the spread one measured run can show if the model is right. */
  simulatedRange: [number, number];
  /** The measured loss: the run's own, or the mean of it and its repeats (docs/e2e/baseline-repeats.json). */
  measured: number;
  /** Every measured loss behind `measured`: the run's first, then its repeats. */
  measuredRuns: number[];
  agrees: boolean;
  /** Requests the model's LB re-sent to another pod (mean per run): set beside HAProxy's redispatch counter, not under the tolerance. */
  simulatedRedispatched: number;
};

/** Every measured run with its simulated loss over AGREEMENT_RUNS (a rolling run's terminations summed). */
export function agreement(results: ResultsFile, repeats: BaselineRepeats | null = readBaselineRepeats()): AgreementRow[] {
  return results.runs
    .filter((row) => !EXCLUDED.some((e) => e.scenario === row.scenario))
    .map((row, i) => {
      const { inputs, terminations } = harnessInputs(row);
      const outcomes = simulateRuns(inputs, AGREEMENT_RUNS * terminations, AGREEMENT_KEY * 1000 + i);
      const losses = Array.from({ length: AGREEMENT_RUNS }, (_, k) => outcomes.slice(k * terminations, (k + 1) * terminations).reduce((n, o) => n + o.lost, 0));
      const simulatedMean = losses.reduce((a, b) => a + b, 0) / losses.length;
      // A run of a few losses is one draw: where the harness repeated it, the mean of every draw.
      const measuredRuns = [row.failureTotal, ...repeatsOf(repeats, row)];
      const measured = measuredRuns.reduce((a, b) => a + b, 0) / measuredRuns.length;
      return {
        row,
        order: inputs.order,
        simulatedMean,
        simulatedRange: [quantile(losses, 0.025), quantile(losses, 0.975)],
        measured,
        measuredRuns,
        agrees: withinTolerance(simulatedMean, measured),
        simulatedRedispatched: outcomes.reduce((n, o) => n + o.fates.redispatched, 0) / AGREEMENT_RUNS,
      };
    });
}

/** Runs per repeat set: their losses are a few per hundred terminations, so the mean needs more runs than a single run's. */
export const REPEAT_RUNS = 2000;

export type RepeatsAgreement = { terminations: number; measured: number; simulatedMean: number; agrees: boolean };

/**
 * The repeats of S5 drain-first behind shutdown-sessions + redispatch, with and without retry-on,
 * on every Envoy, pooled: the rare losses (connects cut at DOWN, the listener-close race) are too
 * few per run to compare one by one. Measured: every failure of every repeat; simulated: the mean
 * per termination over REPEAT_RUNS runs, times the terminations. Same tolerance, on the sums.
 */
export function repeatsAgreement(results: ResultsFile): RepeatsAgreement {
  const sets: RepeatSet[] = [...Object.values(results.races), ...Object.values(results.racesWithRetry)];
  let measured = 0;
  let simulatedMean = 0;
  let terminations = 0;
  sets.forEach((set, i) => {
    const { inputs } = harnessInputs({ scenario: set.scenario, termination: 'gracegate', lbSetting: set.lbSetting });
    const losses = simulateRuns(inputs, REPEAT_RUNS, AGREEMENT_KEY * 1000 + 900 + i).map((o) => o.lost);
    simulatedMean += (losses.reduce((a, b) => a + b, 0) / losses.length) * set.terminations;
    measured += set.cutAtDown.total + set.keepAliveRace.total + set.other;
    terminations += set.terminations;
  });
  return { terminations, measured, simulatedMean, agrees: withinTolerance(simulatedMean, measured) };
}

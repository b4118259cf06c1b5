/**
 * Monte Carlo over the model: `runs` terminations per order, each with its own probe phase and
 * traffic, and the loss per termination summarised (mean, p95, by cause); and as many new pods'
 * starts (src/loss/start-model.ts), so that an order's loss covers the whole rollout: each pod
 * leaves once and its replacement arrives once. Pure and bounded: the work is estimated before
 * anything runs and refused above SIMULATE_LIMITS.workBudget.
 */
import { GracegateError } from '../core/errors';
import { chosenOrder } from '../plan/order-choice';
import type { Plan } from '../plan/plan-gateway';
import { keyedRandom } from '../core/keyed-random';
import { longestMs, meanMs, type DurationDist } from '../loss/duration-dist';
import { lbInputs, ms, podInputs } from '../loss/inputs';
import { FATES, idleConnectionsAtClose, perPodRatePerMs, simulateRun, type Fate, type RunInputs, type RunOutcome, type Traffic } from '../loss/model';
import { ORDER_TITLES, ORDERS, type TerminationOrder } from '../loss/orders';
import { SEQUENCES, type Sequence } from '../contract/hc';
import { perNodeRatePerMs, simulateArrival, type StartInputs, type StartPath } from '../loss/start-model';

const isSequence = (o: TerminationOrder): o is Sequence => (SEQUENCES as readonly string[]).includes(o);

export const SIMULATE_LIMITS = {
  rps: { max: 5000 },
  /** Without --runs: the default, or as many as the work budget allows at this traffic, at least `fittedMin`. */
  runs: { default: 200, max: 2000, fittedMin: 10 },
  pods: { default: 3, min: 2, max: 100 },
  connectMs: { max: 1000 },
  /** Traffic starts before the sequence by the longest request plus 1 s, at most this (ms). */
  warmupMs: { max: 61_000 },
  /** Requests followed over all orders and runs: about a second of CPU per million. */
  workBudget: 20_000_000,
} as const;

/** Over the runs: the mean, its standard error (the spread of the mean), the 95th percentile and the largest. */
export type Stats = { mean: number; stdError: number; p95: number; max: number };

export type OrderResult = {
  order: TerminationOrder;
  title: string;
  /** The plan's own sequence. */
  chosen: boolean;
  lost: Stats;
  /** Mean per termination, by fate (`redispatched` is not a loss). */
  byFate: Record<Fate, number>;
  /** Mean requests the LB gave the leaving pod per termination. */
  toPod: number;
  /** The start half: one new pod's arrival with this order's health probe and start hold. */
  start: StartResult;
  /** Expected requests lost by a rollout of every pod: pods x (the termination's mean + the start's mean). */
  rolloutLost: number;
};

/** A new pod's start, over the runs: the window in which the LB sends a node that still drops, and what it loses. */
export type StartResult = {
  path: StartPath;
  /** The sidecar's hold of its first 200 after the kubelet's readiness probe (the plan's startHoldSeconds for this order). */
  holdSeconds: number;
  windowMs: Stats;
  /** Mean requests the LB sent into the window. */
  sent: number;
  lost: Stats;
  /** Where the probe has a path of its own: the same starts with no hold (what the hold buys); null elsewhere. */
  unheld: { windowMs: Stats; sent: number; lost: Stats } | null;
};

export type SimulateOptions = {
  traffic: Traffic;
  durations: DurationDist;
  /** Runs per order; absent: SIMULATE_LIMITS.runs.default, fewer where the work budget needs (fitRuns). */
  runs?: number;
  pods: number;
  randomKey: number;
  connectMs?: number;
  orders?: readonly TerminationOrder[];
};

export type SimulateReport = {
  gateway: string;
  sequence: Plan['sequence'];
  inputs: {
    pods: number;
    traffic: Traffic;
    durations: string;
    runs: number;
    /** Fewer runs than the default, to stay within the work budget at this traffic (no --runs given). */
    runsFitted: boolean;
    randomKey: number;
    connectMs: number;
    lbDetectSeconds: number;
    lbBufferSeconds: number;
    drainTimeoutSeconds: number;
    lbHasSoftSignal: boolean;
    /** What this LB does with a connection the pod refuses, in its vendor's words (src/lb/<vendor>/behaviour.ts). */
    lbRefused: string;
  };
  orders: OrderResult[];
};

/** The value at or below which a share `q` of the runs lie (nearest rank). */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

export function stats(values: readonly number[]): Stats {
  const n = Math.max(1, values.length);
  const mean = values.reduce((s, v) => s + v, 0) / n;
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / Math.max(1, n - 1);
  return { mean, stdError: Math.sqrt(variance / n), p95: quantile(values, 0.95), max: Math.max(0, ...values) };
}

/** `runs` terminations of one order; run i uses its own generator, so adding runs keeps the earlier ones. */
export function simulateRuns(inputs: RunInputs, runs: number, randomKey: number): RunOutcome[] {
  return Array.from({ length: runs }, (_, i) => simulateRun(inputs, keyedRandom(randomKey * 100_003 + i)));
}

export function simulateOrder(inputs: RunInputs, runs: number, randomKey: number): Pick<OrderResult, 'order' | 'lost' | 'byFate' | 'toPod'> {
  const outcomes = simulateRuns(inputs, runs, randomKey);
  const byFate = Object.fromEntries(FATES.map((f) => [f, outcomes.reduce((n, o) => n + o.fates[f], 0) / runs])) as Record<Fate, number>;
  return { order: inputs.order, lost: stats(outcomes.map((o) => o.lost)), byFate, toPod: outcomes.reduce((n, o) => n + o.toPod, 0) / runs };
}

/** `runs` new pods' starts; start i uses its own generator, apart from the terminations'. */
export function simulateStarts(inputs: StartInputs, runs: number, randomKey: number): { windowMs: Stats; sent: number; lost: Stats } {
  const outcomes = Array.from({ length: runs }, (_, i) => simulateArrival(inputs, keyedRandom(randomKey * 100_003 + 50_021 + i)));
  return { windowMs: stats(outcomes.map((o) => o.windowMs)), sent: outcomes.reduce((n, o) => n + o.sent, 0) / runs, lost: stats(outcomes.map((o) => o.lost)) };
}

/**
 * Runs per order when none are asked for: the default, or as many as the work budget allows
 * (`workPerRun`: requests one run of every order follows), at least SIMULATE_LIMITS.runs.fittedMin.
 * Fewer runs widen the standard error the report prints; they do not bias the mean.
 */
export function fitRuns(workPerRun: number): number {
  const r = SIMULATE_LIMITS.runs;
  return Math.min(r.default, Math.max(r.fittedMin, runsWithinBudget(workPerRun)));
}

/** The most runs per order whose work stays within the budget. */
function runsWithinBudget(workPerRun: number): number {
  return Math.floor(SIMULATE_LIMITS.workBudget / Math.max(1, workPerRun));
}

/** Traffic starts this long before the sequence: the longest request, plus 1 s. */
export function warmupMs(d: DurationDist): number {
  return Math.min(SIMULATE_LIMITS.warmupMs.max, longestMs(d) + 1000);
}

/** Requests one run follows, roughly: the traffic the model simulates over the run's span. */
function requestsPerRun(inputs: RunInputs): number {
  const p = inputs.pod;
  const spanS =
    (inputs.warmupMs +
      p.drainTimeoutMs +
      2 * p.lbBufferMs +
      p.terminationDrainDurationMs +
      inputs.lb.probeIntervalMs +
      inputs.lb.downAfterFirstFailMs +
      inputs.lb.propagationMs) /
    1000;
  // The model follows the leaving pod's share of open-loop arrivals, and every closed-loop client.
  const perPod = perPodRatePerMs(inputs.traffic, inputs.pods, meanMs(inputs.durations), inputs.lb.connectMs) * 1000;
  return (inputs.traffic.kind === 'poisson' ? perPod : perPod * inputs.pods) * spanS;
}

/** Every order (or `opts.orders`) behind the plan's LB: gracegate's with their own timings, the baselines with the plan's. */
export function simulatePlan(plan: Plan, opts: SimulateOptions): SimulateReport {
  const orders = opts.orders ?? ORDERS.filter((o) => o !== 'naive-503-listeners-stopped');
  const connectMs = opts.connectMs ?? plan.traffic.connectMs;
  const inputsFor = (order: TerminationOrder): RunInputs => ({
    pods: opts.pods,
    // lb-config writes the LB for the sequence the team would run; a baseline runs behind the plan's own.
    lb: lbInputs(plan.loadBalancer, isSequence(order) ? order : plan.sequence, connectMs),
    // A gracegate order runs with the timings the plan would give it (its own, as the planner ranks
    // it); a baseline with the plan's.
    pod: podInputs(isSequence(order) ? plan.orders.find((o) => o.order === order)!.timings : plan.timings),
    order,
    traffic: opts.traffic,
    durations: opts.durations,
    warmupMs: warmupMs(opts.durations),
    idleAtClose: idleConnectionsAtClose(opts.traffic, opts.durations, opts.pods, connectMs),
  });
  // Each order's start as the planner derived it: a gracegate order with its own probe path and
  // hold (OrderCost), a baseline with the plan's.
  const startInputsFor = (order: TerminationOrder, lb: RunInputs['lb']): StartInputs => {
    const own = chosenOrder({ orders: plan.orders, sequence: isSequence(order) ? order : plan.sequence });
    return {
      path: own.startPath,
      holdMs: ms(own.startHoldSeconds),
      minSyncMs: ms(plan.kubeProxy.minSyncPeriod),
      propagationMs: ms(plan.kubeProxy.propagation),
      probeIntervalMs: ms(plan.loadBalancer.probeIntervalSeconds),
      recoverMs: ms(plan.loadBalancer.lbRecoverSeconds),
      redispatch: lb.redispatch,
      connectHoldMs: lb.refusedHoldMs,
      pods: opts.pods,
      traffic: opts.traffic,
      meanRequestMs: meanMs(opts.durations),
      connectMs,
    };
  };
  const perOrder = orders.map((order) => {
    const run = inputsFor(order);
    return { order, run, start: startInputsFor(order, run.lb) };
  });
  const startOf = (inputs: StartInputs, runs: number): StartResult => ({
    path: inputs.path,
    holdSeconds: inputs.holdMs / 1000,
    ...simulateStarts(inputs, runs, opts.randomKey),
    unheld: inputs.path === 'own-path' ? simulateStarts({ ...inputs, holdMs: 0 }, runs, opts.randomKey) : null,
  });
  // A start follows the requests of one window, at most the whole rule path long; twice, held and unheld.
  const startWork = (i: StartInputs): number => 2 * perNodeRatePerMs(i) * (i.minSyncMs + i.propagationMs);
  const workPerRun = perOrder.reduce((n, o) => n + requestsPerRun(o.run) + startWork(o.start), 0);
  const runs = opts.runs ?? fitRuns(workPerRun);
  const work = workPerRun * runs;
  if (work > SIMULATE_LIMITS.workBudget) {
    const fits = runsWithinBudget(workPerRun);
    throw new GracegateError([
      {
        path: '--runs',
        message: `about ${Math.round(work).toLocaleString('en')} requests to follow (${runs} runs x ${orders.length} orders x the traffic over the sequence), more than the ${SIMULATE_LIMITS.workBudget.toLocaleString('en')} the simulator allows: ${fits >= 1 ? `at this traffic at most --runs ${fits}, or lower --rps` : 'lower --rps or --duration-dist (not one run fits)'}`,
      },
    ]);
  }
  const t = plan.timings;
  return {
    gateway: `${plan.gateway.namespace}/${plan.gateway.name}`,
    sequence: plan.sequence,
    inputs: {
      pods: opts.pods,
      traffic: opts.traffic,
      durations: opts.durations.text,
      runs,
      runsFitted: opts.runs === undefined && runs < SIMULATE_LIMITS.runs.default,
      randomKey: opts.randomKey,
      connectMs,
      lbDetectSeconds: t.lbDetectSeconds,
      lbBufferSeconds: t.lbBufferSeconds,
      drainTimeoutSeconds: t.drainTimeoutSeconds,
      lbHasSoftSignal: inputsFor(plan.sequence).lb.softSignal,
      lbRefused: plan.loadBalancer.refused.detail,
    },
    orders: perOrder.map(({ order, run, start: startInputs }) => {
      const termination = simulateOrder(run, runs, opts.randomKey);
      const start = startOf(startInputs, runs);
      return {
        ...termination,
        title: ORDER_TITLES[order],
        chosen: order === plan.sequence,
        start,
        rolloutLost: opts.pods * (termination.lost.mean + start.lost.mean),
      };
    }),
  };
}

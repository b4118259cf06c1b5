/**
 * `gracegate simulate`: the plan run through the discrete-event model of the LB and the pod, for
 * each termination order, under the traffic the user describes. docs/simulate.md.
 */
import { GracegateError } from '../core/errors';
import { planGateway } from '../plan/plan-gateway';
import { parseDurationDist } from '../loss/duration-dist';
import { renderSimulateText } from '../simulate/report-text';
import { SIMULATE_LIMITS, simulatePlan } from '../simulate/simulate';
import { boundedFlag, durationFlag, integerFlag, runParsedCommand, UsageError } from './args';
import { loadSpecFile } from './load-spec-file';

const L = SIMULATE_LIMITS;

const USAGE = `usage: gracegate simulate <spec.yaml> [--rps N] [--duration-dist DIST] [--runs N] [--pods N]
                         [--random-key N] [--connect-time DUR] [--format text|json]

Runs the spec's plan through a discrete-event model of its LB (probe timing, DOWN and its flush,
redispatch, retries, keep-alive reuse, connect time) and of the leaving pod, for each of
gracegate's three sequences, the source article's order (keep accepting, poll in-flight up to the
drain timeout, then 503, stop after the LB buffer) and the naive 503-at-once, and prints the
expected requests lost per pod termination: mean and p95 over the runs, and the mean per cause.
The plan's own sequence is marked. Nothing is contacted. docs/simulate.md.

  --rps N              requests per second arriving at the LB, Poisson (more than 0, at most ${L.rps.max});
                       default: the plan's traffic (spec.traffic.requestsPerSecondPerPod x pods)
  --duration-dist DIST request lengths: fixed:1.8s | uniform:100ms..2s | lognormal:p50=80ms,p99=2s
                       | lognormal:p50=80ms,p99=2s,max=3s (none longer than max)
                       | a weighted mix: 0.95*fixed:100ms+0.05*fixed:20s (weights sum to 1);
                       default: the plan's (spec.traffic.requestDurations, or its default)
  --runs N             terminations simulated per order, at most ${L.runs.max}; default ${L.runs.default}, or
                       fewer (at least ${L.runs.fittedMin}) where heavy traffic would pass the simulator's budget
  --pods N             gateway pods behind the LB (default: the spec's replicas, or an HPA's
                       minReplicas, at least ${L.pods.min}; ${L.pods.min}-${L.pods.max})
  --random-key N       keys the random generator: the same key, the same numbers (default 1)
  --connect-time DUR   LB to pod connect (default: spec.traffic.lbToPodRoundTripMs; at most ${L.connectMs.max}ms)
  --format FORMAT      text (default) or json
`;

function rpsFlag(value: string): number {
  if (!/^\d+(\.\d+)?$/.test(value) || Number(value) <= 0) throw new UsageError(`--rps must be a number above 0, got '${value}'`);
  return boundedFlag('rps', Number(value), 0, L.rps.max);
}

export async function run(args: string[]): Promise<number> {
  return runParsedCommand(
    USAGE,
    args,
    {
      rps: { type: 'string' },
      'duration-dist': { type: 'string' },
      runs: { type: 'string' },
      pods: { type: 'string' },
      'random-key': { type: 'string', default: '1' },
      'connect-time': { type: 'string' },
      format: { type: 'string', default: 'text' },
    },
    true,
    async ({ values, positionals }) => {
      const format = values.format as string;
      if (format !== 'text' && format !== 'json') throw new UsageError(`--format must be text or json, got '${format}'`);
      if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'missing the gateway spec file' : 'simulate takes exactly one spec file');
      const rpsText = values.rps as string | undefined;
      const rpsGiven = rpsText === undefined ? undefined : rpsFlag(rpsText);
      const distText = values['duration-dist'] as string | undefined;
      let durationsGiven;
      try {
        durationsGiven = distText === undefined ? undefined : parseDurationDist(distText);
      } catch (err) {
        if (err instanceof GracegateError) throw new UsageError(err.lines().join('; '));
        throw err;
      }
      const runsText = values.runs as string | undefined;
      const runs = runsText === undefined ? undefined : boundedFlag('runs', integerFlag('runs', runsText), 1, L.runs.max);
      const randomKey = integerFlag('random-key', values['random-key'] as string);
      const connectText = values['connect-time'] as string | undefined;
      const connectGiven = connectText === undefined ? undefined : Math.round(durationFlag('connect-time', connectText) * 1e6) / 1000;
      if (connectGiven !== undefined) boundedFlag('connect-time', connectGiven, 0, L.connectMs.max);
      const plan = planGateway(loadSpecFile(positionals[0]));
      const podsDefault = plan.scaling.mode === 'fixed' ? plan.scaling.replicas : plan.scaling.minReplicas;
      const pods = boundedFlag(
        'pods',
        values.pods === undefined ? Math.max(L.pods.min, podsDefault) : integerFlag('pods', values.pods as string),
        L.pods.min,
        L.pods.max,
      );
      // What the flags leave out is the plan's own traffic, the one its orders were ranked by.
      const rps = rpsGiven ?? boundedFlag('rps', plan.traffic.requestsPerSecondPerPod * pods, 0, L.rps.max);
      const durations = durationsGiven ?? parseDurationDist(plan.traffic.requestDurations);
      const connectMs = connectGiven ?? boundedFlag('connect-time', plan.traffic.connectMs, 0, L.connectMs.max);
      let report;
      try {
        report = simulatePlan(plan, { traffic: { kind: 'poisson', rps }, durations, ...(runs === undefined ? {} : { runs }), pods, randomKey, connectMs });
      } catch (err) {
        if (err instanceof GracegateError) throw new UsageError(err.lines().join('; '));
        throw err;
      }
      process.stdout.write(format === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderSimulateText(report));
      return 0;
    },
  );
}

/**
 * The model's inputs from a plan: the LB's probe timing and what it does at DOWN, from the plan's
 * normalised LB behaviour and the vendor's own settings, and the pod's timings. Every number comes
 * from the plan or is named here with where it comes from.
 */
import type { Plan } from '../plan/plan-gateway';
import type { Sequence } from '../contract/hc';
import type { LbInputs, PodInputs } from './model';

/**
 * A connect from the LB to a pod, assumed 1 ms (same zone). It is the window of the connect cut at
 * DOWN and of the listener-close race; `--connect-time` changes it.
 */
export const DEFAULT_CONNECT_MS = 1;

const ms = (seconds: number): number => Math.round(seconds * 1000);

/**
 * The LB of `plan`, as it would run for `lbConfigFor`: whether it reuses its connections to the pod
 * depends on the sequence lb-config writes it for (HAProxy: http-server-close for drain-first unless
 * the spec says). Read from the plan's LB behaviour alone (src/lb/<vendor>/behaviour.ts).
 */
export function lbInputs(plan: Plan, lbConfigFor: Sequence, connectMs = DEFAULT_CONNECT_MS): LbInputs {
  const lb = plan.loadBalancer;
  const interval = ms(lb.probeIntervalSeconds);
  const redispatch = lb.refused.value === 'resent';
  return {
    probeIntervalMs: interval,
    // The plan's detection is the worst case: one period to the first failing probe, then the rest.
    downAfterFirstFailMs: Math.max(0, ms(lb.lbDetectSeconds) - interval),
    softSignal: lb.gracefulSignal !== undefined && lb.probeReachesSidecar,
    flushOnDown: lb.cutsSessionsOnDown,
    propagationMs: ms(lb.propagation.value),
    redispatch,
    // A refused request that is not re-sent holds its client this long (HAProxy's retries on the same pod).
    retries: redispatch || lb.refused.holdMs === 0 ? 0 : 1,
    retryDelayMs: redispatch ? 0 : lb.refused.holdMs,
    retryOnEmptyResponse: lb.resetRequestResent.value,
    reusesConnections: lbConfigFor === 'drain-first' ? lb.reuse.drainFirst : lb.reuse.otherOrders,
    connectMs,
  };
}

export function podInputs(plan: Plan): PodInputs {
  const t = plan.timings;
  return {
    drainTimeoutMs: ms(t.drainTimeoutSeconds),
    lbBufferMs: ms(t.lbBufferSeconds),
    pollIntervalMs: ms(t.pollIntervalSeconds),
    terminationDrainDurationMs: ms(t.terminationDrainDurationSeconds),
  };
}

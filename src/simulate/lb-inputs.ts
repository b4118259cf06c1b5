/**
 * The model's inputs from a plan: the LB's probe timing and what it does at DOWN, from the plan's
 * normalised LB behaviour and the vendor's own settings, and the pod's timings. Every number comes
 * from the plan or is named here with where it comes from.
 */
import type { Plan } from '../plan/plan-gateway';
import type { Sequence } from '../contract/hc';
import type { LbInputs, PodInputs } from './model';

/** HAProxy waits min(timeout connect, 1 s) before each retry of a failed connect; lb-config sets no timeout connect. */
export const HAPROXY_RETRY_DELAY_MS = 1000;

/**
 * A connect from the LB to a pod, assumed 1 ms (same zone). It is the window of the connect cut at
 * DOWN and of the listener-close race; `--connect-time` changes it.
 */
export const DEFAULT_CONNECT_MS = 1;

const ms = (seconds: number): number => Math.round(seconds * 1000);

/**
 * The LB of `plan`, as it would run for `lbConfigFor`: HAProxy's keep-alive to the pod depends on
 * the sequence lb-config writes it for (http-server-close for drain-first unless the spec says).
 */
export function lbInputs(plan: Plan, lbConfigFor: Sequence, connectMs = DEFAULT_CONNECT_MS): LbInputs {
  const lb = plan.loadBalancer;
  const s = lb.settings;
  const interval = ms(lb.probeIntervalSeconds);
  const haproxy = s.model === 'haproxy' ? s : null;
  return {
    probeIntervalMs: interval,
    // The plan's detection is the worst case: one period to the first failing probe, then the rest.
    downAfterFirstFailMs: Math.max(0, ms(lb.lbDetectSeconds) - interval),
    softSignal: lb.gracefulSignal !== undefined && lb.probeReachesSidecar,
    flushOnDown: lb.cutsSessionsOnDown,
    propagationMs: ms(lb.propagation.value),
    redispatch: lb.resendsRefusedConnections === 'yes',
    retries: haproxy?.retries ?? 0,
    retryDelayMs: haproxy ? HAPROXY_RETRY_DELAY_MS : 0,
    retryOnEmptyResponse: haproxy?.retryOnEmptyResponse ?? false,
    reusesConnections: haproxy ? (haproxy.httpServerClose === undefined ? lbConfigFor !== 'drain-first' : !haproxy.httpServerClose) : lb.reusesConnections,
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

/**
 * The loss model's inputs: the LB's probe timing and what it does at DOWN and with a refused
 * connection, read from the LB's behaviour alone (src/lb/<vendor>/behaviour.ts: no vendor is named
 * here), and the pod's timings. Every number comes from them or is named here with its source.
 */
import type { Sequence } from '../contract/hc';
import type { LbBehaviour } from '../model/lb-behaviour';
import type { LbInputs } from './model';
import type { PodInputs } from './pod-control';

/**
 * A connect from the LB to a pod, assumed 1 ms (same zone). It is the window of the connect cut at
 * DOWN and of the listener-close race; `--connect-time` changes it.
 */
export const DEFAULT_CONNECT_MS = 1;

/** Seconds as whole milliseconds: every time the model runs on. */
export const ms = (seconds: number): number => Math.round(seconds * 1000);

/** What the loss model reads of an LB: its behaviour, with the worst-case detection in seconds. */
export type LossLb = Pick<
  LbBehaviour,
  'probeIntervalSeconds' | 'gracefulSignal' | 'probeReachesSidecar' | 'cutsSessionsOnDown' | 'propagation' | 'refused' | 'resetRequestResent' | 'reuse'
> & { lbDetectSeconds: number };

/** The pod's timings the model reads (a plan's `timings`). */
export type LossTimings = {
  drainTimeoutSeconds: number;
  lbBufferSeconds: number;
  pollIntervalSeconds: number;
  terminationDrainDurationSeconds: number;
};

/**
 * The LB as it runs behind `lbConfigFor`: whether it reuses its connections to the pod depends on
 * the sequence lb-config writes it for (HAProxy: http-server-close for drain-first unless the spec
 * says). A refused connection the LB's fact calls `not-known` is taken as `resentUnknown` says: the
 * planner evaluates both and keeps the worse.
 */
export function lbInputs(lb: LossLb, lbConfigFor: Sequence, connectMs = DEFAULT_CONNECT_MS, resentUnknown = false): LbInputs {
  const interval = ms(lb.probeIntervalSeconds);
  const redispatch = lb.refused.value === 'resent' || (lb.refused.value === 'not-known' && resentUnknown);
  return {
    probeIntervalMs: interval,
    // The detection is the worst case: one period to the first failing probe, then the rest.
    downAfterFirstFailMs: Math.max(0, ms(lb.lbDetectSeconds) - interval),
    softSignal: lb.gracefulSignal !== undefined && lb.probeReachesSidecar,
    flushOnDown: lb.cutsSessionsOnDown,
    propagationMs: ms(lb.propagation.value),
    redispatch,
    refusedHoldMs: redispatch ? 0 : lb.refused.holdMs,
    retryOnEmptyResponse: lb.resetRequestResent.value,
    reusesConnections: lbConfigFor === 'drain-first' ? lb.reuse.drainFirst : lb.reuse.otherOrders,
    connectMs,
  };
}

export function podInputs(t: LossTimings): PodInputs {
  return {
    drainTimeoutMs: ms(t.drainTimeoutSeconds),
    lbBufferMs: ms(t.lbBufferSeconds),
    pollIntervalMs: ms(t.pollIntervalSeconds),
    terminationDrainDurationMs: ms(t.terminationDrainDurationSeconds),
  };
}

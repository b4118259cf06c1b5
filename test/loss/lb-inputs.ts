import type { LbInputs } from '../../src/loss/model';

/** An LB for the loss model's tests: keeps sessions, loses refused connects, no reuse; `over` changes it. */
export function lbInputsOf(over: Partial<LbInputs> = {}): LbInputs {
  return {
    probeIntervalMs: 300,
    downAfterFirstFailMs: 300,
    softSignal: false,
    flushOnDown: false,
    propagationMs: 0,
    redispatch: false,
    refusedHoldMs: 0,
    retryOnEmptyResponse: false,
    reusesConnections: false,
    connectMs: 1,
    ...over,
  };
}

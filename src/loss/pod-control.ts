/**
 * The leaving pod as the termination orders drive it (src/loss/orders.ts) and the model runs it
 * (src/loss/model.ts): in a file of its own so the two need not import each other.
 */

/** The pod's side, from the plan's timings. */
export type PodInputs = { drainTimeoutMs: number; lbBufferMs: number; pollIntervalMs: number; terminationDrainDurationMs: number };

/** What the termination order drives on the leaving pod. */
export type PodControl = {
  inputs: PodInputs;
  after(ms: number, fn: () => void): void;
  /** The health endpoint the LB probes answers soft (the graceful signal) or fails. */
  health(answer: 'soft' | 'fail'): void;
  /** The proxy's drain: `close` stops the listeners (new connects refused), `keep` keeps accepting. */
  drain(listeners: 'close' | 'keep'): void;
  /** Calls `then` at the first poll that sees no request in flight, or at the drain timeout. */
  waitZero(then: () => void): void;
  exit(): void;
};

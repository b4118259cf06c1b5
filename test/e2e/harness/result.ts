/** What one end-to-end run measured: the data behind a table row and a timeline. */
/** How the pod left: gracegate's preStop, or one of the harness's labelled baseline scripts. */
export type Termination = 'gracegate' | 'naive' | 'naive-listeners-stopped' | 'seed';

export type MeasuredEvent = {
  /** 1-6 as in FACTS.md §1. */
  id: 1 | 2 | 3 | 4 | 5 | 6;
  name: string;
  /** Milliseconds after the termination started; null when it did not happen. */
  atMs: number | null;
  /** Where the time comes from (sidecar /state, HAProxy log, harness poll of the proxy's stats). */
  source: string;
  note?: string;
};

export type ScenarioResult = {
  scenario: string;
  title: string;
  /** `gracegate drain-first`, `naive`, `seed order`… */
  sequence: string;
  termination: Termination;
  lbSetting: string;
  requests: number;
  failures: Record<string, number>;
  failureTotal: number;
  /** HAProxy's backend counters. */
  haproxy: { econ: number; eresp: number; wretr: number; wredis: number; srvAbrt: number; hrsp5xx: number };
  /** Streams: chunks received / expected, over every stream request. */
  chunks: { received: number; expected: number } | null;
  /** Planner's expectation for this LB setup (findings with expectedLoss), when any. */
  plannerFindings: Array<{ id: string; expectedLoss?: string }>;
  events: MeasuredEvent[];
  /** Client requests in flight over time, and the leaving pod's active requests over time (ms after termination start). */
  clientInFlight: Array<[number, number]>;
  podInFlight: Array<[number, number]>;
  /** Milliseconds from the termination start to the end of the preStop hooks (gracegate), or of the script (baselines). */
  terminationMs: number;
  /** The load ran from loadStartMs to loadEndMs (ms after termination start; negative: before it). */
  loadStartMs: number;
  loadEndMs: number;
  extra?: Record<string, string | number>;
};

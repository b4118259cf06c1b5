/** What one end-to-end run measured: the data behind a table row and a timeline. */
import type { LbCounters } from './front-lb';

/** How the pod left: gracegate's preStop, or one of the harness's labelled baseline scripts. */
export type Termination = 'gracegate' | 'naive' | 'naive-listeners-stopped' | 'seed';

export type MeasuredEvent = {
  /** 1-6 as in docs/facts.md §1. */
  id: 1 | 2 | 3 | 4 | 5 | 6;
  name: string;
  /** Milliseconds after the termination started; null when it did not happen. */
  atMs: number | null;
  /** Where the time comes from (sidecar /state, HAProxy log, harness poll of the proxy's stats). */
  source: string;
  note?: string;
};

/**
 * What one gracegate termination left behind, in ms after the run's first termination started:
 * the sidecar's own record (its state file), the two preStop hooks, the kubelet's record of each
 * container, and what the LB (HAProxy) did about this pod. harness/expect.ts `sequenceProblems`
 * holds it to the sequence the plan promised.
 */
export type SequenceProof = {
  pod: string;
  /** The pod's server name at the LB. */
  server: string;
  sequence: string;
  startMs: number;
  /** The plan's grace period, as the kubelet applied it. */
  graceMs: number;
  /** The sidecar's final state and its events [1], [3], [4] and CLOSED (null: did not happen). */
  finalState: string | null;
  drainTimedOut: boolean | null;
  lbFailMs: number | null;
  drainStartMs: number | null;
  /**
   * When the sidecar saw Envoy answer its drain calls (null: not answered, or not recorded): Envoy
   * stops the listeners while it handles them, so they closed between [3] and this (and the workers'
   * sockets just after). Under load this came 143 ms after [3]: the sidecar fsyncs its state file
   * before it calls, and its own event loop lags.
   */
  drainAckedMs?: number | null;
  zeroMs: number | null;
  closedMs: number | null;
  waitClosed: { status: number | null; atMs: number; text: string } | null;
  drainExit: { code: number | null; atMs: number; text: string } | null;
  containers: Array<{ name: string; preStopEndMs: number | null; sigtermMs: number; sigkillMs: number | null; exitMs: number }>;
  /** HAProxy's first DOWN / NOLB of this pod's server after the termination started. */
  lbDownMs: number | null;
  lbNolbMs: number | null;
  /**
   * The cluster's: HAProxy's first UP of this server after its NOLB or DOWN. A server is a node
   * (its health NodePort), so a replacement pod on the same node can bring it back UP.
   */
  lbUpAgainMs?: number | null;
  /** The end of the last response this pod served, as `lastServedBy` logged it (on its own clock). */
  lastServedEndMs: number | null;
  /** How late HAProxy read a sent response at most, in this run (expect.ts relaySlackMs); absent in older results. */
  relaySlackMs?: number;
  /**
   * Whose log gave lastServedEndMs: the pod's own Envoy (the e2e harness: when it sent the last
   * byte), else HAProxy (when it had passed the response on: tens of ms later under load).
   */
  lastServedBy?: 'its Envoy' | 'HAProxy';
  /** The last request the load started, anywhere (the load was still running until then). */
  lastRequestStartMs: number;
};

export type ScenarioResult = {
  scenario: string;
  title: string;
  /** `gracegate drain-first`, `naive`, `article order`… */
  sequence: string;
  termination: Termination;
  lbSetting: string;
  requests: number;
  failures: Record<string, number>;
  failureTotal: number;
  /** The LB's counters (harness/front-lb.ts). */
  lbCounters: LbCounters;
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
  /** One per gracegate termination (none for the baselines). */
  proofs: SequenceProof[];
  /** The proxy under the sidecar (`Envoy 1.36.4`) and the LB in front (`HAProxy 2.6.12-1+deb12u4`, `Envoy 1.36.4`). */
  proxy: string;
  lb: string;
  extra?: Record<string, string | number>;
};

/**
 * The scenarios of issue 5, defined once: the tests assert on them, and report-main runs the same
 * definitions to write docs/e2e/RESULTS.md.
 */
import type { LoadOptions, RequestSpec } from './load';
import { LB_SETTINGS, type LbSetting, type ScenarioConfig } from './scenario';

/** Requests of 50 ms - 2 s and 1.5 s streams: FACTS.md §2's 50-3000 ms, compressed like the probes. */
export const MIXED: LoadOptions['mix'] = [
  { weight: 4, spec: { kind: 'slow', ms: 50 } },
  { weight: 3, spec: { kind: 'slow', ms: 200 } },
  { weight: 2, spec: { kind: 'slow', ms: 500 } },
  { weight: 2, spec: { kind: 'slow', ms: 1000 } },
  { weight: 1, spec: { kind: 'slow', ms: 2000 } },
  { weight: 1, spec: { kind: 'stream', chunks: 10, intervalMs: 150 } },
];

const steady = (durationMs: number, seed: number): ScenarioConfig['load'] => ({
  kind: 'steady',
  options: { workers: 12, durationMs, mix: MIXED, requestTimeoutMs: 15_000, seed },
});

/** The three LB behaviours with a gracegate sequence that FACTS.md §2 says is lossless, one per sequence. */
export const ONE_PER_SEQUENCE: LbSetting[] = [LB_SETTINGS.flushRedispatch, LB_SETTINGS.noFlush, LB_SETTINGS.disableOn404];

const LONG_REQUEST: RequestSpec = { kind: 'slow', ms: 1800 };
/** A 1.8 s stream, shorter than the 3 s drain timeout (p99 2 s x 1.2). */
const STREAM: RequestSpec = { kind: 'stream', chunks: 12, intervalMs: 150 };

export const S1: ScenarioConfig[] = [
  { scenario: 'S1', title: 'one long request in flight', setting: LB_SETTINGS.flushRedispatch, termination: 'naive', pods: 2, load: { kind: 'single', requests: [{ atMs: 0, spec: LONG_REQUEST }] }, leaveAtMs: 300 },
  ...ONE_PER_SEQUENCE.map((setting): ScenarioConfig => ({ scenario: 'S1', title: 'one long request in flight', setting, termination: 'gracegate', pods: 2, load: { kind: 'single', requests: [{ atMs: 0, spec: LONG_REQUEST }] }, leaveAtMs: 300 })),
];

export const S3: ScenarioConfig = {
  scenario: 'S3', title: 'retries hide resets', setting: LB_SETTINGS.flushRedispatch, termination: 'naive-listeners-stopped', pods: 2, load: steady(5000, 3), leaveAtMs: 1500,
};

export const S4: ScenarioConfig[] = [
  { scenario: 'S4', title: 'a streaming response', setting: LB_SETTINGS.flushRedispatch, termination: 'naive', pods: 2, load: { kind: 'single', requests: [{ atMs: 0, spec: STREAM }] }, leaveAtMs: 300 },
  ...ONE_PER_SEQUENCE.map((setting): ScenarioConfig => ({ scenario: 'S4', title: 'a streaming response', setting, termination: 'gracegate', pods: 2, load: { kind: 'single', requests: [{ atMs: 0, spec: STREAM }] }, leaveAtMs: 300 })),
];

const S5_SETTINGS: LbSetting[] = [LB_SETTINGS.flushRedispatch, LB_SETTINGS.flushNoRedispatch, LB_SETTINGS.noFlush, LB_SETTINGS.disableOn404];

export const S5_GRACEGATE: ScenarioConfig[] = S5_SETTINGS.map((setting, i) => ({
  scenario: 'S5', title: 'steady load, mixed lengths, one pod leaves', setting, termination: 'gracegate', pods: 2, load: steady(6000, 10 + i), leaveAtMs: 1500,
}));

export const S5_SEED: ScenarioConfig[] = S5_SETTINGS.map((setting, i) => ({
  scenario: 'S5', title: 'steady load, mixed lengths, one pod leaves', setting, termination: 'seed', pods: 2, load: steady(7000, 10 + i), leaveAtMs: 1500,
}));

/** The load runs until one second after the last replacement pod is Ready (the 60 s is only a bound). */
export const ROLLING: ScenarioConfig = {
  scenario: 'rolling', title: 'rolling replacement of every pod under load (maxUnavailable 1, maxSurge 0)', setting: LB_SETTINGS.flushRedispatch, termination: 'gracegate', pods: 3, load: steady(60_000, 42), leaveAtMs: 1000, rolling: true,
};

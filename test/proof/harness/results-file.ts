/**
 * docs/e2e/results.json: what the report script measured, the one source of docs/e2e/RESULTS.md and
 * of the README's proof numbers (harness/render.ts writes both from it; a test checks they agree).
 * A row per run holds only what the documents print and the allowances read: no curves (those go
 * to the SVG timelines).
 */
import { readFileSync } from 'node:fs';
import type { MeasuredRaces } from './allowances';
import { classifyFailures, runSequenceProblems, zeroBeforeLastServed } from './expect';
import type { LbCounters } from './front-lb';
import type { MeasuredEvent, Termination } from './result';
import type { ScenarioRun } from './scenario';

/** One gracegate termination, as the report states it: did the sequence run, and when the proxy got SIGTERM. */
export type ProofRow = {
  pod: string;
  problems: string[];
  lbFailMs: number | null;
  drainStartMs: number | null;
  zeroMs: number | null;
  closedMs: number | null;
  lbDownMs: number | null;
  lbNolbMs: number | null;
  waitClosedMs: number | null;
  proxySigtermMs: number | null;
  proxyExitMs: number | null;
  drainExitMs: number | null;
  drainTimedOut: boolean | null;
};

export type RunRow = {
  scenario: string;
  title: string;
  sequence: string;
  termination: Termination;
  lbSetting: string;
  proxy: string;
  lb: string;
  requests: number;
  failures: Record<string, number>;
  failureTotal: number;
  lbCounters: LbCounters;
  chunks: { received: number; expected: number } | null;
  /** The planner's findings with an expected loss (gracegate runs), or null for a baseline. */
  predicted: Array<{ id: string; expectedLoss: string }> | null;
  /** The plan's numbers the planner-vs-measured table compares. */
  planned: { lbDetectSeconds: number; lbBufferSeconds: number; drainTimeoutSeconds: number; sequenceSeconds: number; terminationGracePeriodSeconds: number };
  /** The failures sorted: the two races, refused connects and the rest (harness/expect.ts). */
  classes: { cutAtDown: number; keepAliveRace: number; other: number };
  proofs: ProofRow[];
  events: MeasuredEvent[];
  svg: string;
  /** What the run's SVG timeline draws beside the events (harness/report.ts), so render-main.ts can draw it again. */
  timeline?: RunTimeline;
  extra?: Record<string, string | number>;
};

/**
 * What the timeline plots besides the events: the span of its time axis (the load's start and end,
 * the termination's start and end, whichever lie furthest out; ms after the termination started)
 * and the two in-flight curves ([ms, requests]).
 */
export type RunTimeline = {
  spanStartMs: number;
  spanEndMs: number;
  clientInFlight: Array<[number, number]>;
  podInFlight: Array<[number, number]>;
};

/**
 * What the repeated runs of one configuration measured, per proxy: the races, the other failures,
 * the runs whose sequence proof failed, and of those terminations the ones that ended on the drain
 * timeout and the ones where the LB logged a response from the pod after its [4] (drain-first's
 * one-more-request window).
 */
export type RepeatSet = MeasuredRaces & {
  scenario: string;
  lbSetting: string;
  requests: number;
  other: number;
  failedRuns: number;
  drainTimeouts: number;
  lateResponses: number;
  lbRetries: number;
};

export type ResultsFile = {
  generated: {
    date: string;
    command: string;
    node: string;
    cpus: number;
    seconds: number;
    haproxy: string;
    envoys: Array<{ version: string; role: string; why: string }>;
  };
  runs: RunRow[];
  /** Per proxy label: the repeats of S5 drain-first behind shutdown-sessions + redispatch; the allowances read these. */
  races: Record<string, RepeatSet>;
  /** Per proxy label: the same repeats with retryOnEmptyResponse. */
  racesWithRetry: Record<string, RepeatSet>;
  /** An example of the generated HAProxy backend (S5 gracegate, first setting). */
  backend: string;
};

export function proofRows(run: ScenarioRun): ProofRow[] {
  const problems = runSequenceProblems(run);
  return run.result.proofs.map((p) => {
    const proxy = p.containers.find((c) => c.name === 'istio-proxy');
    return {
      pod: p.pod,
      problems: problems.filter((x) => x.startsWith(`${p.pod}: `)).map((x) => x.slice(p.pod.length + 2)),
      lbFailMs: p.lbFailMs,
      drainStartMs: p.drainStartMs,
      zeroMs: p.zeroMs,
      closedMs: p.closedMs,
      lbDownMs: p.lbDownMs,
      lbNolbMs: p.lbNolbMs,
      waitClosedMs: p.waitClosed?.status === 200 ? p.waitClosed.atMs : null,
      proxySigtermMs: proxy?.sigtermMs ?? null,
      proxyExitMs: proxy?.exitMs ?? null,
      drainExitMs: p.drainExit?.code === 0 ? p.drainExit.atMs : null,
      drainTimedOut: p.drainTimedOut,
    };
  });
}

export function runRow(run: ScenarioRun, svg: string): RunRow {
  const r = run.result;
  const c = classifyFailures(run);
  const t = run.plan.timings;
  return {
    scenario: r.scenario,
    title: r.title,
    sequence: r.sequence,
    termination: r.termination,
    lbSetting: r.lbSetting,
    proxy: r.proxy,
    lb: r.lb,
    requests: r.requests,
    failures: r.failures,
    failureTotal: r.failureTotal,
    lbCounters: r.lbCounters,
    chunks: r.chunks,
    predicted:
      r.termination === 'gracegate'
        ? run.plan.findings.filter((f) => f.expectedLoss !== undefined).map((f) => ({ id: f.id, expectedLoss: f.expectedLoss! }))
        : null,
    planned: {
      lbDetectSeconds: t.lbDetectSeconds,
      lbBufferSeconds: t.lbBufferSeconds,
      drainTimeoutSeconds: t.drainTimeoutSeconds,
      sequenceSeconds: t.sequenceSeconds,
      terminationGracePeriodSeconds: t.terminationGracePeriodSeconds,
    },
    classes: { cutAtDown: c.cutAtDown.length, keepAliveRace: c.keepAliveRace.length, other: c.other.length },
    proofs: proofRows(run),
    events: r.events,
    timeline: {
      spanStartMs: Math.min(r.loadStartMs, r.loadEndMs, 0, r.terminationMs),
      spanEndMs: Math.max(r.loadStartMs, r.loadEndMs, 0, r.terminationMs),
      clientInFlight: r.clientInFlight.map(([t, v]) => [Math.round(t), v]),
      podInFlight: r.podInFlight.map(([t, v]) => [Math.round(t), v]),
    },
    svg,
    ...(r.extra ? { extra: r.extra } : {}),
  };
}

/** Sums what repeated runs of one configuration measured. */
export function repeatSet(runs: ScenarioRun[]): RepeatSet {
  const classes = runs.map((r) => classifyFailures(r));
  const kind = (k: 'cutAtDown' | 'keepAliveRace') => ({
    total: classes.reduce((n, c) => n + c[k].length, 0),
    runsWith: classes.filter((c) => c[k].length > 0).length,
    maxPerRun: Math.max(0, ...classes.map((c) => c[k].length)),
  });
  return {
    scenario: runs[0]!.result.scenario,
    lbSetting: runs[0]!.result.lbSetting,
    runs: runs.length,
    terminations: runs.reduce((n, r) => n + r.terminations.length, 0),
    requests: runs.reduce((n, r) => n + r.result.requests, 0),
    cutAtDown: kind('cutAtDown'),
    keepAliveRace: kind('keepAliveRace'),
    other: classes.reduce((n, c) => n + c.other.length, 0),
    failedRuns: runs.filter((r) => runSequenceProblems(r).length > 0).length,
    drainTimeouts: runs.reduce((n, r) => n + r.result.proofs.filter((p) => p.drainTimedOut === true).length, 0),
    lateResponses: runs.reduce((n, r) => n + r.result.proofs.filter(zeroBeforeLastServed).length, 0),
    lbRetries: runs.reduce((n, r) => n + r.result.lbCounters.wretr, 0),
  };
}

/** results.json's text: indented, with each in-flight curve on one line (thousands of points otherwise take a line each). */
export function formatResults(results: ResultsFile): string {
  const curves: string[] = [];
  const curve = (key: string, value: unknown): unknown =>
    (key === 'clientInFlight' || key === 'podInFlight') && Array.isArray(value) ? `@@curve:${curves.push(JSON.stringify(value)) - 1}@@` : value;
  return `${JSON.stringify(results, curve, 2).replace(/"@@curve:(\d+)@@"/g, (_, n: string) => curves[Number(n)]!)}\n`;
}

export function readResults(file: string): ResultsFile {
  return JSON.parse(readFileSync(file, 'utf8')) as ResultsFile;
}

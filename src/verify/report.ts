/** `gracegate verify`'s output: the JSON document (the contract: requests, failures, failuresByKind) and the text summary. */
import { terminationEvent } from '../contract/hc';
import { placePodState, POD_STATE_CLOCK, type PodStatePolling, type PodStateReport, type PodStateSample } from './pod-state';
import type { CommandRun, VerifyRun } from './run-verify';
import { failureKind, type VerifySummary } from './summary';

/** Columns across the load in the timeline: enough to see a second-long gap in a minute's run, few enough to stay light. */
export const TIMELINE_SLICES = 120;

export type VerifyReport = VerifySummary & {
  url: string;
  scenario: string;
  /** The load's bounds as run. */
  load: { ratePerSecond: number; connections: number; durationMs: number; requestTimeoutMs: number };
  /** Ms from the load's start: when the termination command started (null: the run ended before it). */
  terminationAtMs: number | null;
  /** The same instant on the wall clock (ISO 8601), to find the run in the LB's and the cluster's logs. */
  terminationStartedAt: string | null;
  /** The load ran from startMs to endMs, ms after the termination command started. */
  loadStartMs: number;
  loadEndMs: number;
  stoppedBy: VerifyRun['stoppedBy'];
  /** The user's commands, their times ms after the termination command started. */
  terminate: CommandRun | null;
  observe: CommandRun | null;
  /** Requests by outcome (ok or the failure kind) in each of TIMELINE_SLICES slices of the load, by start time. */
  timeline: { sliceMs: number; counts: Array<Record<string, number>> };
  /** --pod-state: each pod's last /state, its six events on the termination's clock. */
  podStates?: PodStateReport[];
  /** --pod-state: how the polling went, and what the event times are measured with. */
  podStatePolling?: PodStatePolling & { clock: string };
};

/** What --pod-state gathered: the pods listed before the load, each one's last answer. */
export type PodStateCapture = { pods: readonly string[]; last: ReadonlyMap<string, PodStateSample>; polling: PodStatePolling };

function timelineOf(run: VerifyRun): VerifyReport['timeline'] {
  const sliceMs = Math.max(1, run.loadEndMs - run.loadStartMs) / TIMELINE_SLICES;
  const counts: Array<Record<string, number>> = Array.from({ length: TIMELINE_SLICES }, () => ({}));
  for (const rec of run.records) {
    if (rec.outcome === 'cancelled') continue;
    const kind = failureKind(rec.outcome) ?? 'ok';
    const slice = counts[Math.min(TIMELINE_SLICES - 1, Math.max(0, Math.floor((rec.startMs - run.loadStartMs) / sliceMs)))]!;
    slice[kind] = (slice[kind] ?? 0) + 1;
  }
  return { sliceMs, counts };
}

/** The report, every time on the termination's clock (the load's start when there was none). */
export function verifyReport(
  run: VerifyRun,
  summary: VerifySummary,
  meta: Pick<VerifyReport, 'url' | 'scenario' | 'load'>,
  pods?: PodStateCapture,
): VerifyReport {
  const t0 = run.terminationAt ?? run.loadStartMs;
  const fromLoad = t0 - run.loadStartMs;
  const shift = (c: CommandRun | null): CommandRun | null =>
    c === null ? null : { ...c, startMs: c.startMs - fromLoad, endMs: c.endMs === null ? null : c.endMs - fromLoad };
  return {
    ...meta,
    requests: summary.requests,
    ok: summary.ok,
    failures: summary.failures,
    failuresByKind: summary.failuresByKind,
    cancelled: summary.cancelled,
    verdict: summary.verdict,
    terminationAtMs: run.terminationAt === null ? null : run.terminationAt - run.loadStartMs,
    terminationStartedAt: run.terminationAt === null ? null : new Date(run.terminationAt).toISOString(),
    loadStartMs: run.loadStartMs - t0,
    loadEndMs: run.loadEndMs - t0,
    stoppedBy: run.stoppedBy,
    terminate: shift(run.terminate),
    observe: shift(run.observe),
    failed: summary.failed,
    timeline: timelineOf(run),
    ...(pods
      ? {
          podStates: pods.pods.map((pod) => placePodState(pod, pods.last.get(pod) ?? null, t0)),
          podStatePolling: { ...pods.polling, clock: POD_STATE_CLOCK },
        }
      : {}),
  };
}

const s3 = (ms: number): string => `${ms >= 0 ? '+' : ''}${(ms / 1000).toFixed(3)} s`;

function commandLine(label: string, c: CommandRun | null): string {
  if (c === null) return `${label}: not run`;
  const end =
    c.endMs === null
      ? 'still running'
      : c.code === 0
        ? `exited 0 at ${s3(c.endMs)}`
        : c.code !== null
          ? `exited ${c.code} at ${s3(c.endMs)}`
          : `stopped (${c.signal}) at ${s3(c.endMs)}: still running at the end of --duration`;
  return `${label}: '${c.command}' started at ${s3(c.startMs)}, ${end}`;
}

function podStateLines(r: VerifyReport): string[] {
  const p = r.podStatePolling;
  if (!r.podStates || !p) return [];
  const lines = [
    `pod state (kubectl exec … gracegate state, every ${p.intervalMs / 1000} s, ${p.sequenceIntervalMs / 1000} s while a pod's sequence runs, -n ${p.namespace} -l ${p.selector}): ${p.polls} polls, ${p.failures} failed${p.lastError ? ` (last error: ${p.lastError})` : ''}`,
    `  ${p.clock}`,
  ];
  for (const pod of r.podStates) {
    const read = pod.answeredAtMs === null ? 'never answered' : `last state ${pod.state}, read at ${s3(pod.answeredAtMs)}`;
    lines.push(`  ${pod.pod}: ${pod.terminated ? 'terminated' : 'not terminated'}, ${read}`);
    if (!pod.events.some((e) => e.atMs !== null)) continue;
    for (const e of pod.events) {
      const when = e.atMs !== null ? `${s3(e.atMs)}${e.note ? ` (${e.note})` : ''}` : '- (not in its last answer)';
      lines.push(`    [${e.id}] ${terminationEvent(e.id).title.padEnd(26)} ${when}`);
    }
  }
  return lines;
}

/** Lists at most this many failed requests; the JSON has them all. */
const MAX_LISTED = 50;

export function renderVerifyText(r: VerifyReport): string {
  const kinds = Object.entries(r.failuresByKind).sort((a, b) => b[1] - a[1]);
  const out = [
    `gracegate verify: ${r.requests} requests to ${r.url} (scenario ${r.scenario}, at most ${r.load.ratePerSecond}/s on ${r.load.connections} keep-alive connections), ${r.failures} failed${r.cancelled > 0 ? `, ${r.cancelled} cancelled by Ctrl-C` : ''}`,
    `times are seconds after the termination command started; the load ran from ${s3(r.loadStartMs)} to ${s3(r.loadEndMs)} (stopped by ${r.stoppedBy === 'observe' ? "the --observe command's exit plus --tail" : r.stoppedBy === 'interrupt' ? 'Ctrl-C: partial report' : 'the end of --duration'})`,
    ...(r.terminationStartedAt ? [`termination started at ${r.terminationStartedAt}`] : []),
    commandLine('terminate', r.terminate),
    ...(r.observe ? [commandLine('observe', r.observe)] : []),
    `failures by kind: ${kinds.length === 0 ? 'none' : kinds.map(([k, n]) => `${n} ${k}`).join(', ')}`,
    ...r.failed
      .slice(0, MAX_LISTED)
      .map(
        (f) =>
          `  ${s3(f.startMs).padStart(10)} .. ${s3(f.endMs).padStart(10)}  ${f.kind.padEnd(10)} GET ${f.path}${f.reusedConnection ? ' (reused connection)' : ''}${f.chunks ? ` (${f.chunks.received}/${f.chunks.expected} chunks)` : ''}`,
      ),
    ...(r.failed.length > MAX_LISTED ? [`  … ${r.failed.length - MAX_LISTED} more in --format json`] : []),
    ...podStateLines(r),
    `verdict: ${r.verdict.status.toUpperCase()}: ${r.verdict.text}`,
  ];
  return `${out.join('\n')}\n`;
}

/**
 * The hc sidecar's CPU request and limit under node CPU pressure (bench/hc-cpu-share-bench.ts):
 * Kubernetes' arithmetic from a request and a limit to the cgroup's `cpu.shares` and CFS quota, and
 * docs/manifests.md's table, rendered from docs/bench/hc-cpu-share-results.json
 * (test/pod/hc-cpu-docs.test.ts holds the doc to this rendering, so the doc and the figures cannot
 * disagree).
 */
import { blockIn } from './marker-block';

/** The CFS period the kubelet leaves at the kernel's default: 100 ms. */
export const CFS_PERIOD_US = 100_000;

/** A CPU quantity (`10m`, `0.5`, `2`) in millicores. */
export function milliCpu(quantity: string): number {
  const m = /^(\d+)m$/.exec(quantity);
  if (m) return Number(m[1]);
  if (/^\d+(\.\d{1,3})?$/.test(quantity)) return Math.round(Number(quantity) * 1000);
  throw new Error(`not a CPU quantity: '${quantity}'`);
}

/**
 * A request's `cpu.shares`, as the kubelet sets it (kubernetes pkg/kubelet/cm, MilliCPUToShares):
 * milliCPU × 1024 / 1000, rounded down, at least 2.
 */
export function cpuShares(requestMilli: number): number {
  return Math.min(262_144, Math.max(2, Math.floor((requestMilli * 1024) / 1000)));
}

/**
 * A limit's `cpu.cfs_quota_us` per CFS_PERIOD_US (MilliCPUToQuota): milliCPU × period / 1000, at
 * least 1000 µs; no limit: -1 (no quota).
 */
export function cfsQuotaUs(limitMilli: number | null): number {
  return limitMilli === null ? -1 : Math.max(1000, Math.floor((limitMilli * CFS_PERIOD_US) / 1000));
}

/** One request/limit pair the bench measures; `limit: null` is no CPU limit. */
export type Candidate = { request: string; limit: string | null };

export const candidateName = (c: Candidate): string => `${c.request} / ${c.limit ?? 'no limit'}`;

/** The probes of one run: how many were sent, failed (over the LB timeout or unanswered), and the latency quantiles of the answered ones. */
export type ProbeFigures = { sent: number; failed: number; failures: string; p50: number; p99: number; max: number };

/** What the hc's cgroup and process did over a run. */
export type CgroupFigures = {
  /** The hc process's CPU (utime + stime), ms per second of the run. */
  cpuMsPerSecond: number;
  /** Time the hc's main thread spent runnable but waiting for a CPU (schedstat), ms over the run. */
  runQueueWaitMs: number;
  /** CFS periods in which the quota throttled the cgroup, and the time throttled (cpu.stat), over the run. */
  throttledPeriods: number;
  throttledMs: number;
  /** throttledMs per second of the run. */
  throttledMsPerSecond: number;
};

export type CpuShareRow = {
  candidate: string;
  request: string;
  limit: string | null;
  shares: number;
  quotaUs: number;
  /**
   * Spawn to the first 200 on /health_check.html, started in its group, no neighbour: the hc's CPU
   * (the process's) and the CFS throttling (the group's) until then. A limit's cost shows in a
   * burst, and a start-up is one.
   */
  startup: { ms: number; cpuMs: number; throttledPeriods: number; throttledMs: number };
  /** The same hc, same cgroup, no neighbour, just before. */
  alone: ProbeFigures;
  /**
   * No neighbour, a probe storm on the health port (keep-alive probers, as the cluster's probe-load
   * measurement, docs/cluster.md): the hc's own demand above a small limit. `requestsPerSecond`: the
   * storm's answered requests.
   */
  storm: ProbeFigures & CgroupFigures & { requestsPerSecond: number };
  /** With the neighbour burning CPU beside it. */
  contended: ProbeFigures & CgroupFigures;
  /** contended p99 over alone p99 (a pass's own); combined: the passes' median. */
  ratio: number | null;
};

export type CpuShareResults = {
  bench: string;
  date: string;
  machine: string;
  loadAverage: { start: number; end: number };
  setup: {
    probes: number;
    stormProbes: number;
    ratePerSecond: number;
    lbTimeoutMs: number;
    hardTimeoutMs: number;
    pollIntervalSeconds: number;
    neighbour: { busyLoops: number; shares: number };
    storm: { connections: number };
    parentShares: number;
    cfsPeriodUs: number;
  };
  rounds: number;
  rows: CpuShareRow[];
  passes: CpuShareRow[][];
  /** An earlier run kept beside (its own note says how it differs); not rendered. */
  earlierRun?: { note: string; date: string; loadAverage: { start: number; end: number }; rounds: number; rows: unknown[]; passes: unknown[][] };
};

export const TABLE_BEGIN = '<!-- hc-cpu-share table: rendered from docs/bench/hc-cpu-share-results.json (bench/hc-cpu-share-table.ts) -->';
export const TABLE_END = '<!-- end hc-cpu-share table -->';

const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(1) : '-');

/**
 * Two tables of every candidate, `chosen` (request/limit as in HC_RESOURCES) in bold: the probes
 * beside the neighbour (what the request buys), then the bursts where a limit can bite (start-up,
 * probe storm).
 */
export function cpuShareTable(results: CpuShareResults, chosen: Candidate): string {
  const s = results.setup;
  const first = results.rows[0];
  const contention = [
    `| hc request / limit | cpu.shares | CFS quota per ${s.cfsPeriodUs / 1000} ms | failed of ${first?.contended.sent ?? 0} (over ${s.lbTimeoutMs} ms) | p50 ms | p99 ms | max ms | p99 / no neighbour | p99 ms, no neighbour | hc run-queue wait ms | throttled periods (ms) |`,
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const bursts = [
    `| hc request / limit | start-up ms | start-up: throttled periods | storm: requests/s | storm: hc CPU ms/s | storm: throttled ms/s (periods) | storm: failed of ${first?.storm.sent ?? 0} | storm: p99 ms | storm: max ms |`,
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results.rows) {
    if (r.shares !== cpuShares(milliCpu(r.request)) || r.quotaUs !== cfsQuotaUs(r.limit === null ? null : milliCpu(r.limit))) {
      throw new Error(`docs/bench/hc-cpu-share-results.json: ${r.candidate}: shares ${r.shares} / quota ${r.quotaUs} are not Kubernetes' for it`);
    }
    const name = r.request === chosen.request && r.limit === chosen.limit ? `**${r.candidate}** (chosen)` : r.candidate;
    const c = r.contended;
    const quota = r.quotaUs < 0 ? 'none' : `${r.quotaUs / 1000} ms`;
    const ratio = r.ratio === null ? '-' : r.ratio.toFixed(2);
    contention.push(
      `| ${name} | ${r.shares} | ${quota} | ${c.failed} | ${ms(c.p50)} | ${ms(c.p99)} | ${ms(c.max)} | ${ratio} | ${ms(r.alone.p99)} | ${ms(c.runQueueWaitMs)} | ${c.throttledPeriods} (${ms(c.throttledMs)}) |`,
    );
    const t = r.storm;
    bursts.push(
      `| ${name} | ${ms(r.startup.ms)} | ${r.startup.throttledPeriods} | ${Math.round(t.requestsPerSecond)} | ${ms(t.cpuMsPerSecond)} | ${ms(t.throttledMsPerSecond)} (${t.throttledPeriods}) | ${t.failed} | ${ms(t.p99)} | ${ms(t.max)} |`,
    );
  }
  return `${TABLE_BEGIN}\n${contention.join('\n')}\n\n${bursts.join('\n')}\n${TABLE_END}`;
}

/** The block of `doc` between the markers (markers included), or undefined. */
export function tableIn(doc: string): string | undefined {
  return blockIn(doc, TABLE_BEGIN, TABLE_END);
}

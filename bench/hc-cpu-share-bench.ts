/**
 * The hc sidecar's CPU request and limit under node CPU pressure: are the LB's probes still answered
 * within the LB's check timeout when a neighbour takes every CPU it can get, and what does a CPU
 * limit cost when the hc itself needs more?
 *
 * A CPU request becomes the container cgroup's `cpu.shares` (milliCPU × 1024 / 1000, at least 2),
 * which is all the container is given when the node's CPU is contended; a limit becomes a CFS quota
 * per 100 ms period. The real `gracegate hc` (as the other hc benches start it, against the Envoy
 * stand-in in this process; the poll interval synth writes by default, 1 s) runs in a cgroup v1
 * `cpu` group with a candidate's shares and quota (Kubernetes' arithmetic,
 * bench/hc-cpu-share-table.ts) from its start (bench/cgroup-exec.ts). Beside it, a sibling group of
 * 1024 shares holds the neighbour when it runs: busy loops, two per core, a pod that requests one CPU
 * and burns every core it can. Both are children of a parent group of the bench's own with the
 * shares of the node's allocatable CPU (as kubepods has). The probes come from this process (the
 * root group, like an LB outside the node): a new connection each, `GET /health_check.html`, at a
 * steady rate; a probe fails when it is answered after the LB's timeout (300 ms: the test cluster's
 * HAProxy, `inter 300ms`, whose check timeout is its inter) or not at all within 2 s.
 *
 * Per candidate, one hc: its start-up (spawn to the first 200, no neighbour), the probes with no
 * neighbour, the probes during a probe storm (keep-alive probers in their own process, no
 * neighbour: where a limit bites), then the probes beside the neighbour (where the request counts).
 * Reported: failed probes, p50/p99/max, the contended p99 over the same hc's p99 without the
 * neighbour, the run-queue wait of the hc's main thread (/proc/PID/task/PID/schedstat: runnable, not
 * running), the hc's CPU and the CFS throttling (cpu.stat). Each pass measures every candidate (the
 * order rotated from pass to pass); each row is the passes' medians (see combine()). The machine is
 * shared: other load is noise common to every candidate of a pass, which is why the ratio and the
 * comparison within a pass are what to read.
 *
 * Needs root and the cpu controller as cgroup v1 at /sys/fs/cgroup/cpu (fails naming what is
 * missing). Every group and process it makes is removed on the way out, failure and SIGINT/SIGTERM
 * included. Prints Markdown; `--json FILE` writes the results (docs/bench/hc-cpu-share-results.json,
 * which docs/manifests.md's tables render: node dist/bench/hc-cpu-share-docs-main.js).
 *
 * Run (root): npm run build && node dist/bench/hc-cpu-share-bench.js [--rounds N] [--probes N] [--json FILE]
 * GRACEGATE_HC_BIN=/other/checkout/bin/gracegate.js runs another build's sidecar.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { request } from '../test/support/http';
import { spawnHc, tempStateFile, type SpawnedHc } from '../test/support/hc';
import { waitFor } from '../test/support/wait';
import { startEnvoyStandin } from '../test/support/envoy-standin';
import { CpuCgroups, requireCgroupV1Cpu } from './cgroup-v1';
import { attacker, quantile, sleep, type Attacker } from './probe-rig';
import {
  CFS_PERIOD_US,
  candidateName,
  cfsQuotaUs,
  cpuShares,
  milliCpu,
  type Candidate,
  type CgroupFigures,
  type CpuShareResults,
  type CpuShareRow,
  type ProbeFigures,
} from './hc-cpu-share-table';

const NAME = 'hc-cpu-share-bench';
/** Another build's CLI (as the other hc benches take it), run by bench/cgroup-exec.ts in its group. */
const HC_BIN = process.env['GRACEGATE_HC_BIN'];
process.env['GRACEGATE_HC_BIN'] = path.join(__dirname, 'cgroup-exec.js');

const CANDIDATES: readonly Candidate[] = [
  { request: '10m', limit: '200m' },
  { request: '50m', limit: '200m' },
  { request: '100m', limit: '200m' },
  { request: '100m', limit: null },
  { request: '100m', limit: '500m' },
  { request: '200m', limit: null },
];

const RATE = 20;
const STORM_PROBES = 200;
const STORM_CONNECTIONS = 8;
const STORM_FROM = '127.0.8.1';
const LB_TIMEOUT_MS = 300;
const HARD_TIMEOUT_MS = 2000;
const WARMUP_PROBES = 40;
const SETTLE_MS = 1500;
const POLL_INTERVAL_SECONDS = 1;
const NEIGHBOUR_SHARES = 1024;
const CORES = os.cpus().length;
const NEIGHBOUR_LOOPS = 2 * CORES;
/** kubepods' shares: the node's allocatable CPU (here every core), as the kubelet sets them. */
const PARENT_SHARES = cpuShares(CORES * 1000);
/** USER_HZ: the unit of utime and stime in /proc/PID/stat (100 on every architecture Linux runs Node on). */
const CLOCK_TICKS = 100;

/** `count` probes at RATE/s, a new connection each; every latency kept (answered within HARD_TIMEOUT_MS). */
async function lbProbes(url: string, count: number): Promise<ProbeFigures> {
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  const fail = (kind: string): void => {
    failures.set(kind, (failures.get(kind) ?? 0) + 1);
  };
  const pending: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1000) / RATE - performance.now();
    if (wait > 0) await sleep(wait);
    const t0 = performance.now();
    pending.push(
      request(url, { timeoutMs: HARD_TIMEOUT_MS }).then(
        (r) => {
          const took = performance.now() - t0;
          if (r.status !== 200) fail(`HTTP ${r.status}`);
          else {
            latencies.push(took);
            if (took > LB_TIMEOUT_MS) fail(`over ${LB_TIMEOUT_MS} ms`);
          }
        },
        (err: NodeJS.ErrnoException) =>
          fail(err.name === 'TimeoutError' || err.name === 'AbortError' ? `no answer in ${HARD_TIMEOUT_MS} ms` : (err.code ?? err.name)),
      ),
    );
  }
  await Promise.all(pending);
  latencies.sort((a, b) => a - b);
  return {
    sent: count,
    failed: [...failures.values()].reduce((a, b) => a + b, 0),
    failures: [...failures].map(([k, v]) => `${v} ${k}`).join(', ') || '-',
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    max: latencies[latencies.length - 1] ?? NaN,
  };
}

type Sample = { at: number; cpuTicks: number; waitNs: number; nrThrottled: number; throttledNs: number };

function sample(pid: number, group: string): Sample {
  // /proc/PID/stat: fields after the command's closing parenthesis; utime and stime are the 12th and 13th of them.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const schedstat = fs.readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ');
  const cpuStat = new Map(
    fs
      .readFileSync(`${group}/cpu.stat`, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => l.split(' ') as [string, string]),
  );
  return {
    at: performance.now(),
    cpuTicks: Number(f[11]) + Number(f[12]),
    waitNs: Number(schedstat[1]),
    nrThrottled: Number(cpuStat.get('nr_throttled') ?? 0),
    throttledNs: Number(cpuStat.get('throttled_time') ?? 0),
  };
}

function between(a: Sample, b: Sample): CgroupFigures {
  const seconds = (b.at - a.at) / 1000;
  const throttledMs = (b.throttledNs - a.throttledNs) / 1e6;
  return {
    cpuMsPerSecond: ((b.cpuTicks - a.cpuTicks) * 1000) / CLOCK_TICKS / seconds,
    runQueueWaitMs: (b.waitNs - a.waitNs) / 1e6,
    throttledPeriods: b.nrThrottled - a.nrThrottled,
    throttledMs,
    throttledMsPerSecond: throttledMs / seconds,
  };
}

/** The neighbour: NEIGHBOUR_LOOPS busy loops, each moved into `group` as soon as it exists. */
function startNeighbour(groups: CpuCgroups, group: string): ChildProcess[] {
  const loops: ChildProcess[] = [];
  for (let i = 0; i < NEIGHBOUR_LOOPS; i++) {
    const p = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
    loops.push(p);
    groups.move(p, group);
  }
  return loops;
}

async function stopAll(procs: ChildProcess[]): Promise<void> {
  await Promise.all(
    procs.map((p) =>
      p.exitCode !== null || p.signalCode !== null
        ? undefined
        : new Promise<void>((resolve) => {
            p.once('exit', () => resolve());
            p.kill('SIGKILL');
          }),
    ),
  );
}

/**
 * The hc's own demand above a small limit, with no neighbour: STORM_CONNECTIONS keep-alive probers
 * (bench/hc-attacker.ts keepalive, its own process, from an address of their own so that the LB's
 * probes keep theirs), and the LB's probes meanwhile.
 */
async function probeStorm(groups: CpuCgroups, hc: SpawnedHc, group: string, url: string): Promise<CpuShareRow['storm']> {
  const pid = hc.proc.pid!;
  const storm = await attacker(['keepalive', new URL(hc.healthUrl).port, String(STORM_CONNECTIONS), STORM_FROM, '/health_check.html']);
  groups.adopt(storm.proc);
  try {
    await sleep(SETTLE_MS);
    const answered0 = await answered(storm);
    const before = sample(pid, group);
    const probes = await lbProbes(url, STORM_PROBES);
    const after = sample(pid, group);
    const answered1 = await answered(storm);
    return { ...probes, ...between(before, after), requestsPerSecond: ((answered1 - answered0) * 1000) / (after.at - before.at) };
  } finally {
    await storm.stop();
  }
}

/** The storm's answered count from its next once-a-second stats line. */
async function answered(storm: Attacker): Promise<number> {
  const seen = storm.lines.length;
  const line = await waitFor("the storm's stats", 5000, () => storm.lines.slice(seen).find((l) => l['event'] === 'stats'));
  return Number(line['answered']);
}

/** One candidate: one hc started in its group, the probes alone, under a probe storm, then beside the neighbour. */
async function measure(groups: CpuCgroups, neighbourGroup: string, adminUrl: string, c: Candidate, probes: number, pass: number): Promise<CpuShareRow> {
  const shares = cpuShares(milliCpu(c.request));
  const quotaUs = cfsQuotaUs(c.limit === null ? null : milliCpu(c.limit));
  const group = groups.child(`hc-${pass}-${c.request}-${c.limit ?? 'none'}`, shares, quotaUs, CFS_PERIOD_US);
  let hc: SpawnedHc | undefined;
  let neighbour: ChildProcess[] = [];
  try {
    // Started in its group (bench/cgroup-exec.ts), without the neighbour: a limit's cost is a burst's, and a start-up is one.
    const t0 = performance.now();
    hc = await spawnHc(['--envoy-admin', adminUrl, '--state-file', tempStateFile(), '--poll-interval', String(POLL_INTERVAL_SECONDS)], 30_000, {
      GRACEGATE_BENCH_CGROUP: group,
      ...(HC_BIN === undefined ? {} : { GRACEGATE_BENCH_BIN: HC_BIN }),
    });
    const h = hc;
    groups.adopt(h.proc);
    await waitFor('OPEN', 30_000, async () => (await h.get('/health_check.html')).status === 200);
    const startupMs = performance.now() - t0;
    const startup = sample(h.proc.pid!, group);
    groups.move(h.proc, group); // checks that it, and every thread of it, is there
    const url = `${hc.healthUrl}/health_check.html`;
    await lbProbes(url, WARMUP_PROBES);
    process.stderr.write(`${NAME}: pass ${pass}, ${candidateName(c)} (shares ${shares}, quota ${quotaUs}): no neighbour\n`);
    const alone = await lbProbes(url, probes);
    process.stderr.write(`${NAME}: pass ${pass}, ${candidateName(c)}: probe storm\n`);
    const storm = await probeStorm(groups, hc, group, url);
    neighbour = startNeighbour(groups, neighbourGroup);
    await sleep(SETTLE_MS);
    process.stderr.write(`${NAME}: pass ${pass}, ${candidateName(c)}: beside ${NEIGHBOUR_LOOPS} busy loops\n`);
    const before = sample(hc.proc.pid!, group);
    const contendedProbes = await lbProbes(url, probes);
    const contended = { ...contendedProbes, ...between(before, sample(hc.proc.pid!, group)) };
    return {
      candidate: candidateName(c),
      request: c.request,
      limit: c.limit,
      shares,
      quotaUs,
      startup: { ms: startupMs, cpuMs: (startup.cpuTicks * 1000) / CLOCK_TICKS, throttledPeriods: startup.nrThrottled, throttledMs: startup.throttledNs / 1e6 },
      alone,
      storm,
      contended,
      ratio: Number.isFinite(alone.p99) && Number.isFinite(contended.p99) ? contended.p99 / alone.p99 : null,
    };
  } finally {
    await stopAll(neighbour);
    await hc?.stop();
    groups.remove(group);
  }
}

/** The middle of `xs` (for 3 passes, the second smallest): probe-rig's quantile at 0.5. */
const median = (xs: number[]): number =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

function combineProbes(rows: ProbeFigures[]): ProbeFigures {
  const failures = rows.map((r) => r.failures).filter((f) => f !== '-');
  return {
    sent: rows.reduce((n, r) => n + r.sent, 0),
    failed: rows.reduce((n, r) => n + r.failed, 0),
    failures: failures.length > 0 ? failures.join('; ') : '-',
    p50: median(rows.map((r) => r.p50)),
    p99: median(rows.map((r) => r.p99)),
    max: Math.max(...rows.map((r) => r.max)),
  };
}

/** CPU, run-queue wait and throttled ms/s: the passes' medians; throttled periods and ms: summed. */
function combineCgroup(rows: CgroupFigures[]): CgroupFigures {
  return {
    cpuMsPerSecond: median(rows.map((r) => r.cpuMsPerSecond)),
    runQueueWaitMs: median(rows.map((r) => r.runQueueWaitMs)),
    throttledPeriods: rows.reduce((n, r) => n + r.throttledPeriods, 0),
    throttledMs: rows.reduce((n, r) => n + r.throttledMs, 0),
    throttledMsPerSecond: median(rows.map((r) => r.throttledMsPerSecond)),
  };
}

/**
 * The passes' rows of one candidate as one row: probes sent and failed summed, the worst max, p50,
 * p99, the run-queue wait and the CPU the passes' medians, throttling summed, and the ratio the
 * median of each pass's own contended p99 over that pass's p99 without the neighbour.
 */
function combine(passes: CpuShareRow[][]): CpuShareRow[] {
  return CANDIDATES.map((c) => {
    const rows = passes.map((p) => p.find((r) => r.candidate === candidateName(c))!);
    const ratios = rows.map((r) => r.ratio).filter((x): x is number => x !== null);
    return {
      ...rows[0]!,
      startup: {
        ms: median(rows.map((r) => r.startup.ms)),
        cpuMs: median(rows.map((r) => r.startup.cpuMs)),
        throttledPeriods: median(rows.map((r) => r.startup.throttledPeriods)),
        throttledMs: median(rows.map((r) => r.startup.throttledMs)),
      },
      alone: combineProbes(rows.map((r) => r.alone)),
      storm: {
        ...combineProbes(rows.map((r) => r.storm)),
        ...combineCgroup(rows.map((r) => r.storm)),
        requestsPerSecond: median(rows.map((r) => r.storm.requestsPerSecond)),
      },
      contended: { ...combineProbes(rows.map((r) => r.contended)), ...combineCgroup(rows.map((r) => r.contended)) },
      ratio: ratios.length > 0 ? median(ratios) : null,
    };
  });
}

function option(argv: string[], flag: string): string | undefined {
  const at = argv.indexOf(flag);
  return at === -1 ? undefined : argv[at + 1];
}

function whole(argv: string[], flag: string, dflt: number, max: number): number {
  const raw = option(argv, flag);
  const n = raw === undefined ? dflt : Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`${flag}: expected a whole number 1-${max}, got ${raw}`);
  return n;
}

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const rounds = whole(argv, '--rounds', 1, 20);
  const probes = whole(argv, '--probes', 300, 10_000);
  const jsonFile = option(argv, '--json');
  requireCgroupV1Cpu(NAME);
  const load0 = os.loadavg()[0]!;
  const groups = new CpuCgroups(`gracegate-${NAME}-${process.pid}`, PARENT_SHARES);
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`${NAME}: ${signal}: removing the cgroups and processes it made\n`);
    groups.cleanupSync();
    process.exit(128 + (os.constants.signals[signal] ?? 0));
  };
  for (const s of signals) process.on(s, onSignal);
  const atExit = () => groups.cleanupSync();
  process.on('exit', atExit);
  const standin = await startEnvoyStandin({});
  const passes: CpuShareRow[][] = [];
  try {
    const neighbourGroup = groups.child('neighbour', NEIGHBOUR_SHARES, -1, CFS_PERIOD_US);
    for (let pass = 1; pass <= rounds; pass++) {
      const k = (pass - 1) % CANDIDATES.length;
      const order = [...CANDIDATES.slice(k), ...CANDIDATES.slice(0, k)];
      const rows: CpuShareRow[] = [];
      for (const c of order) rows.push(await measure(groups, neighbourGroup, standin.adminUrl, c, probes, pass));
      passes.push(rows);
    }
  } finally {
    await standin.stop();
    groups.cleanupSync();
    for (const s of signals) process.off(s, onSignal);
  }
  const rows = combine(passes);
  const results: CpuShareResults = {
    bench: 'bench/hc-cpu-share-bench.ts',
    date: new Date().toISOString(),
    machine: `${os.cpus()[0]?.model ?? 'cpu'} × ${CORES}, Linux ${os.release()}, Node ${process.version}`,
    loadAverage: { start: load0, end: os.loadavg()[0]! },
    setup: {
      probes,
      stormProbes: STORM_PROBES,
      ratePerSecond: RATE,
      lbTimeoutMs: LB_TIMEOUT_MS,
      hardTimeoutMs: HARD_TIMEOUT_MS,
      pollIntervalSeconds: POLL_INTERVAL_SECONDS,
      neighbour: { busyLoops: NEIGHBOUR_LOOPS, shares: NEIGHBOUR_SHARES },
      storm: { connections: STORM_CONNECTIONS },
      parentShares: PARENT_SHARES,
      cfsPeriodUs: CFS_PERIOD_US,
    },
    rounds,
    rows,
    passes,
  };
  const out = [
    `hc CPU share benchmark — ${results.machine}, load average ${load0.toFixed(1)}-${results.loadAverage.end.toFixed(1)}, ${results.date.slice(0, 10)}, ${rounds} pass${rounds === 1 ? '' : 'es'} (medians)`,
    `neighbour: ${NEIGHBOUR_LOOPS} busy loops at ${NEIGHBOUR_SHARES} shares; probes: ${probes} a run at ${RATE}/s, a new connection each, failed = over ${LB_TIMEOUT_MS} ms or none in ${HARD_TIMEOUT_MS} ms`,
    '',
    `| request / limit | shares | quota µs | failed (of ${probes * rounds}) | failures | p50 ms | p99 ms | max ms | p99 / no neighbour | p99 ms no neighbour | failed no neighbour | hc CPU ms/s | run-queue wait ms | throttled periods (ms) | start-up ms (CPU ms, throttled periods) |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const c = r.contended;
      return `| ${r.candidate} | ${r.shares} | ${r.quotaUs} | ${c.failed} | ${c.failures} | ${fmt(c.p50)} | ${fmt(c.p99)} | ${fmt(c.max)} | ${r.ratio === null ? '-' : r.ratio.toFixed(2)} | ${fmt(r.alone.p99)} | ${r.alone.failed} | ${fmt(c.cpuMsPerSecond)} | ${fmt(c.runQueueWaitMs)} | ${c.throttledPeriods} (${fmt(c.throttledMs)}) | ${fmt(r.startup.ms)} (${fmt(r.startup.cpuMs)}, ${r.startup.throttledPeriods}) |`;
    }),
    '',
    `probe storm (no neighbour): ${STORM_CONNECTIONS} keep-alive probers from ${STORM_FROM}; ${STORM_PROBES} LB probes a run meanwhile`,
    '',
    `| request / limit | storm requests/s | hc CPU ms/s | throttled ms/s | throttled periods | failed (of ${STORM_PROBES * rounds}) | failures | p50 ms | p99 ms | max ms |`,
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const t = r.storm;
      return `| ${r.candidate} | ${Math.round(t.requestsPerSecond)} | ${fmt(t.cpuMsPerSecond)} | ${fmt(t.throttledMsPerSecond)} | ${t.throttledPeriods} | ${t.failed} | ${t.failures} | ${fmt(t.p50)} | ${fmt(t.p99)} | ${fmt(t.max)} |`;
    }),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  if (jsonFile) fs.writeFileSync(jsonFile, `${JSON.stringify(results, null, 2)}\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack ?? err.message}\n`);
  process.exit(1);
});

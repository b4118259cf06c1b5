/**
 * The sidecar on real Envoy, side by side in one run, on each pinned version:
 *   1. in-flight 0 → LB 503: the real `gracegate hc` (drain-first) and a real Envoy; the time from
 *      the upstream app finishing the last request to the LB endpoint's first 503, at two poll
 *      intervals (reported as a ratio of the interval);
 *   2. time from the drain calls until the count reaches 0 with N idle keep-alive clients (an LB's
 *      pooled connections), counting requests (the sidecar's rule) and counting listener
 *      connections (Istio's agent, the old rule), with Envoy's default 1 h idle_timeout and with a
 *      3 s one;
 *   3. the polling cost as Envoy CPU (utime + stime from /proc/<pid>/stat): `/stats` as the
 *      sidecar sends it (filter + type=Gauges), with the filter only, and unfiltered, 20 polls a second for 5 s each, on a gateway with 204
 *      clusters, with Istio's stats matcher and with every stat (a mesh that opened it up).
 * Prints Markdown. Numbers depend on the machine; the ratios are the point.
 *
 * Run: npm run build && node dist/bench/envoy-bench.js [--write]   (about 3 minutes;
 * --write records what it prints in docs/benchmarks.json)
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import { COUNTING_STATS_SUFFIXES } from '../src/contract/envoy-stat-names';
import { DEFAULT_COUNTING_EXCLUDE, DEFAULT_COUNTING_INCLUDE } from '../src/contract/hc-config';
import { compileCounting, parseStatsText } from '../src/hc/envoy-stats';
import { request } from '../test/support/http';
import { spawnHc, tempStateFile } from '../test/support/hc';
import { waitFor } from '../test/support/wait';
import { pinnedEnvoys, startEnvoy, type RealEnvoy } from '../test/support/real-envoy';
import { writeOnExit } from '../test/support/bench-results';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const counter = compileCounting({ include: DEFAULT_COUNTING_INCLUDE, exclude: DEFAULT_COUNTING_EXCLUDE });
const CAP_MS = 12_000;
const FILTER = `/stats?filter=${encodeURIComponent(counter.filter)}`;

async function zeroToLb503(version: string, pollSeconds: number, runs: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const envoy = await startEnvoy({ version, statsInclusionSuffixes: [...COUNTING_STATS_SUFFIXES] });
    const hc = await spawnHc([
      '--envoy-admin',
      envoy.adminUrl,
      '--sequence',
      'drain-first',
      '--state-file',
      tempStateFile(),
      '--poll-interval',
      String(pollSeconds),
      '--lb-buffer',
      '0.2',
      '--drain-timeout',
      '30',
    ]);
    try {
      await waitFor('OPEN', 10_000, async () => (await hc.get('/health_check.html')).status === 200);
      // Ends uniformly within one poll interval, a second after the drain or so.
      const inflight = request(`${envoy.trafficUrl}/slow?ms=${1000 + Math.floor(Math.random() * pollSeconds * 1000)}`);
      await waitFor('in flight', 5_000, () => envoy.upstream!.open() === 1);
      await hc.post('/drain?witness=none');
      let at503 = 0;
      while (at503 === 0) {
        const r = await request(`${hc.healthUrl}/health_check.html`);
        if (r.status === 503) at503 = Date.now();
        else await sleep(2);
      }
      await inflight;
      out.push(at503 - envoy.upstream!.idleSince()!);
    } finally {
      await hc.stop();
      await envoy.stop();
    }
  }
  return out;
}

async function countOf(envoy: RealEnvoy): Promise<{ requests: number; connections: number }> {
  const text = (await envoy.admin('GET', FILTER)).body;
  const stats = parseStatsText(text);
  const total = counter.count(stats).total;
  const connections = stats.filter((s) => counter.counts(s.name)).reduce((n, s) => n + s.value, 0);
  return { requests: total, connections };
}

/** ms from the drain calls until each count first reads 0 (null: not within capMs). */
async function timeToZero(version: string, idleClients: number, idleTimeoutMs: number | undefined, capMs: number) {
  const envoy = await startEnvoy({
    version,
    statsInclusionSuffixes: [...COUNTING_STATS_SUFFIXES],
    ...(idleTimeoutMs !== undefined ? { hcmIdleTimeoutMs: idleTimeoutMs } : {}),
  });
  const agents: http.Agent[] = [];
  try {
    await Promise.all(
      Array.from({ length: idleClients }, async () => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        agents.push(agent);
        await request(`${envoy.trafficUrl}/`, { agent });
      }),
    );
    const inflight = request(`${envoy.trafficUrl}/slow?ms=500`);
    await waitFor('in flight', 5_000, () => envoy.upstream!.open() === 1);
    const started = Date.now();
    await envoy.admin('POST', '/drain_listeners');
    await envoy.admin('POST', '/drain_listeners?graceful');
    let requestsZero: number | null = null;
    let connectionsZero: number | null = null;
    while (Date.now() - started < capMs && (requestsZero === null || connectionsZero === null)) {
      const c = await countOf(envoy);
      if (requestsZero === null && c.requests === 0) requestsZero = Date.now() - started;
      if (connectionsZero === null && c.connections === 0) connectionsZero = Date.now() - started;
      await sleep(20);
    }
    await inflight;
    return { requestsZero, connectionsZero };
  } finally {
    for (const a of agents) a.destroy();
    await envoy.stop();
  }
}

function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/** A gateway routing to 200 services: 204 clusters. */
async function pollCost(version: string, istioMatcher: boolean) {
  return pollCostOn(await startEnvoy({ version, statsInclusionSuffixes: [...COUNTING_STATS_SUFFIXES], istioStatsMatcher: istioMatcher, extraClusters: 200 }));
}

async function pollCostOn(envoy: RealEnvoy) {
  // Unbounded reads: what is measured is Envoy's CPU per answer, and an unfiltered answer of every
  // stat is above the 1 MiB the sidecar's own reader (envoy.admin) accepts.
  const get = async (path: string) => (await request(`${envoy.adminUrl}${path}`, { timeoutMs: 10_000 })).body;
  try {
    const stats = (await get('/stats')).split('\n').filter(Boolean).length;
    const window = async (path: string | null) => {
      const before = cpuMs(envoy.pid);
      const until = Date.now() + 5000;
      let bytes = 0;
      while (Date.now() < until) {
        if (path !== null) bytes = (await get(path)).length;
        await sleep(50);
      }
      return { cpu: cpuMs(envoy.pid) - before, bytes };
    };
    const idle = await window(null);
    const sidecar = await window(`${FILTER}&type=Gauges`);
    const filtered = await window(FILTER);
    const unfiltered = await window('/stats');
    return {
      stats,
      idle: idle.cpu,
      sidecar: sidecar.cpu,
      filtered: filtered.cpu,
      unfiltered: unfiltered.cpu,
      filteredBytes: filtered.bytes,
      unfilteredBytes: unfiltered.bytes,
    };
  } finally {
    await envoy.stop();
  }
}

async function main(): Promise<void> {
  writeOnExit('envoy', 'node dist/bench/envoy-bench.js --write');
  console.log('The hc sidecar on real Envoy:\n');
  for (const pinned of pinnedEnvoys()) {
    const v = pinned.version;
    console.log(`**Envoy ${v}**\n`);

    console.log('In-flight 0 → LB 503 (drain-first, 10 runs each):\n');
    console.log('| poll interval | median | mean | max | mean / poll interval (0.5 expected + read time) |');
    console.log('|---|---|---|---|---|');
    for (const poll of [1, 0.2]) {
      const ms = await zeroToLb503(v, poll, 10);
      const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
      console.log(`| ${poll * 1000} ms | ${median(ms)} ms | ${mean.toFixed(0)} ms | ${Math.max(...ms)} ms | ${(mean / (poll * 1000)).toFixed(2)} |`);
    }

    console.log(`\nDrain calls → count 0, one 500 ms request in flight plus N idle keep-alive clients (cap ${CAP_MS / 1000} s; drain_timeout 5 s):\n`);
    console.log('| N idle clients | HCM idle_timeout | requests (sidecar) | listener connections (old rule) | ratio |');
    console.log('|---|---|---|---|---|');
    for (const [n, idle] of [
      [1, undefined],
      [10, undefined],
      [50, undefined],
      [10, 3000],
    ] as const) {
      const r = await timeToZero(v, n, idle, CAP_MS);
      const never = `not within ${CAP_MS / 1000} s`;
      const conn = r.connectionsZero === null ? never : `${r.connectionsZero} ms`;
      const ratio =
        r.requestsZero !== null && r.connectionsZero !== null
          ? (r.connectionsZero / r.requestsZero).toFixed(1)
          : r.requestsZero !== null
            ? `> ${(CAP_MS / r.requestsZero).toFixed(1)}`
            : '-';
      console.log(
        `| ${n} | ${idle === undefined ? '1 h (default)' : `${idle / 1000} s`} | ${r.requestsZero === null ? never : `${r.requestsZero} ms`} | ${conn} | ${ratio} |`,
      );
    }

    console.log('\nPolling cost: Envoy CPU over 5 s at 20 polls/s (100 polls):\n');
    console.log(
      '| stats in Envoy | no polls | sidecar (filter + type=Gauges) | filter only (bytes/answer) | unfiltered (bytes/answer) | unfiltered / sidecar | filter only / sidecar |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const istio of [true, false]) {
      const c = await pollCost(v, istio);
      const above = (x: number) => Math.max(10, x - c.idle); // CPU ticks are 10 ms
      console.log(
        `| ${c.stats} (${istio ? "Istio's matcher" : 'every stat'}) | ${c.idle} ms | ${c.sidecar} ms | ${c.filtered} ms (${c.filteredBytes}) | ${c.unfiltered} ms (${c.unfilteredBytes}) | ${(above(c.unfiltered) / above(c.sidecar)).toFixed(1)} | ${(above(c.filtered) / above(c.sidecar)).toFixed(1)} |`,
      );
    }
    console.log('');
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});

/**
 * hc sidecar benchmark: the real `gracegate hc` process against the Envoy stand-in (its own
 * process), driven over real HTTP. Reports
 *   1. start-up time to the first 200 and idle resident memory (VmRSS after a few idle seconds);
 *   2. health-probe latency (p50/p99/max) at a few hundred probes per second, each on a fresh
 *      connection as an LB probes, while OPEN and while a drain is polling Envoy;
 *   3. the time from in-flight reaching 0 (the stand-in's own clock) to the LB endpoint answering
 *      503, for drain-first at two poll intervals.
 * Prints Markdown. Numbers, not assertions: they depend on the machine.
 *
 * Run: npm run build && node dist/bench/hc-bench.js [--write]
 * (--write records the tables in docs/benchmarks.json, which docs/hc.md renders).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeBenchResult } from '../test/support/bench-results';
import { REPO_ROOT } from '../test/support/repo';
import { request } from '../test/support/http';
import { spawnHc, tempStateFile, type SpawnedHc } from '../test/support/hc';
import { waitFor } from '../test/support/wait';

const STANDIN = path.join(REPO_ROOT, 'dist', 'test', 'support', 'envoy-standin-main.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Standin {
  proc: ChildProcess;
  admin: string;
  traffic: string;
  stop(): Promise<void>;
}

async function startStandin(): Promise<Standin> {
  const proc = spawn(process.execPath, [STANDIN, '--listen-port', '0', '--admin-port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = await new Promise<{ listenPort: number; adminPort: number }>((resolve, reject) => {
    let buf = '';
    proc.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      const line = buf.split('\n').find((l) => l.includes('"event":"ready"'));
      if (line) resolve(JSON.parse(line) as { listenPort: number; adminPort: number });
    });
    proc.once('exit', (code) => reject(new Error(`stand-in exited with ${code}`)));
  });
  return {
    proc,
    admin: `http://127.0.0.1:${ready.adminPort}`,
    traffic: `http://127.0.0.1:${ready.listenPort}`,
    stop: async () => {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    },
  };
}

async function counts(s: Standin): Promise<{ requests: number; zeroSince: number | null; listening: boolean }> {
  return JSON.parse((await request(`${s.admin}/standin/counts`)).body) as { requests: number; zeroSince: number | null; listening: boolean };
}

function rssMiB(pid: number): { rss: number; hwm: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Open-loop probes at `rate`/s for `ms`, each on its own connection. */
async function probeLoad(url: string, rate: number, ms: number) {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let errors = 0;
  const pending: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; performance.now() - start < ms; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    const t0 = performance.now();
    pending.push(
      request(url, { timeoutMs: 2000 }).then(
        (r) => {
          latencies.push(performance.now() - t0);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        },
        () => {
          errors++;
        },
      ),
    );
  }
  await Promise.all(pending);
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    rate: latencies.length / elapsed,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    max: latencies[latencies.length - 1]!,
    errors,
    statuses,
  };
}

async function withRig<T>(args: string[], body: (s: Standin, hc: SpawnedHc) => Promise<T>): Promise<T> {
  const standin = await startStandin();
  let hc: SpawnedHc | undefined;
  try {
    hc = await spawnHc(['--envoy-admin', standin.admin, '--state-file', tempStateFile(), ...args]);
    await waitFor('OPEN', 10_000, async () => (await hc!.get('/health_check.html')).status === 200);
    return await body(standin, hc);
  } finally {
    await hc?.stop();
    await standin.stop();
  }
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);

async function main(): Promise<void> {
  const out: string[] = [];
  process.stdout.write(
    `hc benchmark — ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}\n\n`,
  );

  // 1. start-up and idle memory (default poll interval, 1 s)
  const t0 = performance.now();
  const idle = await withRig(['--sequence', 'drain-first'], async (_s, hc) => {
    const startup = performance.now() - t0;
    await sleep(5000);
    return { startup, ...rssMiB(hc.proc.pid!) };
  });
  out.push('| idle | value |', '|---|---|');
  out.push(`| spawn → first 200 on /health_check.html (incl. stand-in start) | ${fmt(idle.startup, 0)} ms |`);
  out.push(`| resident memory after 5 s idle (VmRSS) | ${fmt(idle.rss)} MiB |`);
  out.push(`| peak resident memory so far (VmHWM) | ${fmt(idle.hwm)} MiB |`, '');

  // 2. probe latency at ~300 probes/s: OPEN, then during a drain polling every 1 s and every 50 ms
  const RATE = 300;
  const DURATION = 8000;
  out.push(
    `| probes (${RATE}/s target, new connection each, ${DURATION / 1000} s) | achieved/s | p50 ms | p99 ms | max ms | errors | RSS after |`,
    '|---|---|---|---|---|---|---|',
  );
  for (const [label, poll, drain] of [
    ['OPEN, poll 1 s', '1', false],
    ['DRAINING, poll 1 s, 20 requests in flight', '1', true],
    ['DRAINING, poll 50 ms, 20 requests in flight', '0.05', true],
  ] as const) {
    const r = await withRig(['--sequence', 'drain-first', '--poll-interval', poll, '--drain-timeout', '60'], async (s, hc) => {
      const held = Array.from({ length: 20 }, () =>
        request(`${s.traffic}/slow?ms=${DURATION + 4000}`, { timeoutMs: DURATION + 10_000 }).catch(() => undefined),
      );
      await waitFor('20 in flight', 5000, async () => (await counts(s)).requests === 20);
      if (drain) {
        await hc.post('/drain?witness=none');
        await waitFor('DRAINING', 5000, async () => (await hc.state())['state'] === 'DRAINING' && !(await counts(s)).listening);
      }
      const result = await probeLoad(`${hc.healthUrl}/health_check.html`, RATE, DURATION);
      const state = String((await hc.state())['state']);
      const mem = rssMiB(hc.proc.pid!);
      await Promise.all(held);
      return { ...result, state, mem };
    });
    out.push(
      `| ${label} (state ${r.state}) | ${fmt(r.rate, 0)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${fmt(r.max, 2)} | ${r.errors} | ${fmt(r.mem.rss)} MiB |`,
    );
  }
  out.push('');

  // 3. in-flight 0 → LB 503 (drain-first)
  out.push('| drain-first: in-flight 0 → /health_check.html 503 | runs | median ms | max ms | sidecar saw 0 after (median ms) |', '|---|---|---|---|---|');
  for (const poll of ['1', '0.2']) {
    const delays: number[] = [];
    const detections: number[] = [];
    for (let run = 0; run < 5; run++) {
      const r = await withRig(['--sequence', 'drain-first', '--poll-interval', poll, '--lb-buffer', '5', '--drain-timeout', '30'], async (s, hc) => {
        const held = request(`${s.traffic}/slow?ms=${1500 + run * 137}`, { timeoutMs: 10_000 });
        await waitFor('in flight', 5000, async () => (await counts(s)).requests === 1);
        await hc.post('/drain?witness=none');
        await held;
        let first503 = 0;
        await waitFor(
          '503',
          10_000,
          async () => {
            const res = await request(`${hc.healthUrl}/health_check.html`, { timeoutMs: 1000 });
            first503 = Date.now();
            return res.status === 503;
          },
          1,
        );
        const zero = (await counts(s)).zeroSince!;
        const e4 = Date.parse(((await hc.state())['events'] as { id: number; at: string }[]).find((e) => e.id === 4)!.at);
        return { delay: first503 - zero, detect: e4 - zero };
      });
      delays.push(r.delay);
      detections.push(r.detect);
    }
    delays.sort((a, b) => a - b);
    detections.sort((a, b) => a - b);
    out.push(`| poll interval ${poll} s | ${delays.length} | ${delays[2]} | ${delays[delays.length - 1]} | ${detections[2]} |`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
  if (process.argv.includes('--write')) writeBenchResult('hc', 'node dist/bench/hc-bench.js --write', out.join('\n'));
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack ?? err.message}\n`);
  process.exit(1);
});

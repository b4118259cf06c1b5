/**
 * What the probe benchmarks share: the attacker in its own process (bench/hc-attacker.ts), and LB
 * probes as an LB sends them (a new connection each, a timeout, a steady rate) with their failures
 * and latency quantiles.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { REPO_ROOT } from '../test/support/repo';
import { request } from '../test/support/http';
import { waitFor } from '../test/support/wait';

const ATTACKER = path.join(REPO_ROOT, 'dist', 'bench', 'hc-attacker.js');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Attacker {
  ready: Record<string, unknown>;
  /** The attacker's process (a bench that must kill it on a signal adopts it). */
  proc: ChildProcess;
  /** Every JSON line it printed so far (`stats` once a second). */
  lines: readonly Record<string, unknown>[];
  stop(): Promise<Record<string, unknown>>;
}

export async function attacker(args: string[]): Promise<Attacker> {
  const proc: ChildProcess = spawn(process.execPath, [ATTACKER, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: Record<string, unknown>[] = [];
  let buf = '';
  proc.stdout!.on('data', (c: Buffer) => {
    buf += c.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      lines.push(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>);
      buf = buf.slice(nl + 1);
    }
  });
  await waitFor('attacker ready', 10_000, () => lines.find((l) => l['event'] === 'ready'));
  return {
    ready: lines.find((l) => l['event'] === 'ready')!,
    proc,
    lines,
    async stop() {
      const exited = proc.exitCode !== null || proc.signalCode !== null ? Promise.resolve() : new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      // A reconnect storm can keep the attacker from its SIGTERM handler: SIGKILL after 2 s.
      const kill = setTimeout(() => proc.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(kill);
      return lines.filter((l) => l['event'] === 'stats').pop() ?? {};
    },
  };
}

export function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export interface ProbeRun {
  failed: number;
  failures: string;
  p50: number;
  p99: number;
  max: number;
}

/**
 * `count` probes at `rate`/s, each on a new connection; failures by kind and latency quantiles of
 * the answered ones. A failure is no answer within `timeoutMs`, or a status other than `ok`.
 */
export async function probes(
  url: string,
  count: number,
  rate: number,
  ok: (status: number) => boolean = (status) => status === 200,
  timeoutMs = 2000,
): Promise<ProbeRun> {
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  const pending: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    const t0 = performance.now();
    pending.push(
      request(url, { timeoutMs }).then(
        (r) => {
          if (ok(r.status)) latencies.push(performance.now() - t0);
          else failures.set(`HTTP ${r.status}`, (failures.get(`HTTP ${r.status}`) ?? 0) + 1);
        },
        (err: NodeJS.ErrnoException) => {
          const kind = err.code ?? err.name;
          failures.set(kind, (failures.get(kind) ?? 0) + 1);
        },
      ),
    );
  }
  await Promise.all(pending);
  latencies.sort((a, b) => a - b);
  const failed = [...failures.values()].reduce((a, b) => a + b, 0);
  return {
    failed,
    failures: [...failures].map(([k, v]) => `${v} ${k}`).join(', ') || '-',
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    max: latencies[latencies.length - 1] ?? NaN,
  };
}

export const fmt = (n: number) => (Number.isNaN(n) ? '-' : n.toFixed(1));

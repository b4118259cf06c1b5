/**
 * Envoy's CPU with the hc polling it and without: one pod's Envoy (the compiled app behind it),
 * driven directly by wrk at a fixed rate, its user + system time read from /proc/<pid>/stat over
 * the same window, with no hc, the hc polling every 1 s, and every 0.2 s. Each condition runs twice,
 * interleaved, so a change in the machine's other load spreads over all three.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { podChanges } from '../../../src/pod/pod-changes';
import { sleep } from '../harness/proc';
import { LoadApp } from './app';
import { LoadPod } from './pod';
import { loadPlan, pacing } from './run';
import { Wrk } from './wrk';

export type CpuCondition = 'no hc' | 'hc 1 s' | 'hc 0.2 s';
export type CpuRow = {
  version: string;
  rate: number;
  windowMs: number;
  /** Envoy CPU ms per window, summed over the repeats, per condition. */
  cpuMs: Record<CpuCondition, number>;
  /** Requests answered per condition (same rate asked). */
  requests: Record<CpuCondition, number>;
  /** CPU per request with the hc over CPU per request without it. */
  ratio1s: number;
  ratio02s: number;
  loadavgAtStart: number[];
};

const POLL: Record<CpuCondition, number | null> = { 'no hc': null, 'hc 1 s': 1, 'hc 0.2 s': 0.2 };

export async function measureCpu(version: string, rate: number, windowMs: number, repeats = 2): Promise<CpuRow> {
  const dir = mkdtempSync(join(tmpdir(), 'gg-load-cpu-'));
  const app = await LoadApp.start('cpu-app', dir);
  const loadavgAtStart = loadavg().map((n) => Math.round(n * 100) / 100);
  const cpuMs: Record<CpuCondition, number> = { 'no hc': 0, 'hc 1 s': 0, 'hc 0.2 s': 0 };
  const requests: Record<CpuCondition, number> = { 'no hc': 0, 'hc 1 s': 0, 'hc 0.2 s': 0 };
  try {
    const { plan } = loadPlan(dir, 'health-first');
    const changes = podChanges(plan);
    let n = 0;
    for (let r = 0; r < repeats; r++) {
      for (const cond of Object.keys(POLL) as CpuCondition[]) {
        const pod = await LoadPod.startLoad(`cpu-${n}`, dir, plan, changes, version, app.port, { hcPollSeconds: POLL[cond] });
        try {
          const wdir = join(dir, `wrk-${n++}`);
          mkdirSync(wdir);
          const p = pacing(rate);
          const wrk = Wrk.start({
            url: `http://127.0.0.1:${pod.ports.listen}`,
            prefix: 'c',
            threads: 1,
            connections: p.connections,
            delayMs: p.delayMs,
            requestMs: [0, 0],
            dir: wdir,
          });
          await sleep(1000);
          const before = pod.cpuMs();
          await sleep(windowMs);
          const after = pod.cpuMs();
          const res = await wrk.stop();
          cpuMs[cond] += after - before;
          requests[cond] += res.summary?.requests ?? 0;
        } finally {
          await pod.kill();
        }
      }
    }
  } finally {
    await app.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const perRq = (c: CpuCondition): number => cpuMs[c] / Math.max(1, requests[c]);
  const round = (x: number): number => Math.round(x * 100) / 100;
  return {
    version,
    rate,
    windowMs,
    cpuMs,
    requests,
    ratio1s: round(perRq('hc 1 s') / perRq('no hc')),
    ratio02s: round(perRq('hc 0.2 s') / perRq('no hc')),
    loadavgAtStart,
  };
}

/**
 * `gracegate measure p99` on the real gateway's access log: Istio's `envoy` access-log provider
 * switched on for the gateway's namespace (a Telemetry resource), a load of known durations through
 * HAProxy, then `kubectl logs … -c istio-proxy` of every gateway pod since the load started, given
 * to measure as a user would.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadResult } from '../../../../src/verify/load';
import { REPO_ROOT } from '../../../support/repo';
import type { Installed } from '../gateway';
import { gatewayPods } from '../gateway';
import { kubectl, kubectlApply } from '../kubectl';
import { ClusterLoad } from '../load';
import { run, sleep, waitUntil } from '../sh';

/** Durations 20, 40, …, 2000 ms, equally likely: the p99 is near the top, and a p95 or a p90 would be 100-200 ms off it. */
export const DURATION_STEP_MS = 20;
export const UNIFORM_MIX = Array.from({ length: 100 }, (_, i) => ({ weight: 1, spec: { kind: 'slow' as const, ms: DURATION_STEP_MS * (i + 1) } }));

/** Nearest-rank q-quantile (the smallest value with at least q of the values at or below it), as measure computes it. */
export function nearestRank(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

/** Turns on Istio's `envoy` access log (text, stdout) for the namespace's proxies; waits until each gateway pod logs a request. */
export async function enableAccessLog(g: Installed, url: string): Promise<void> {
  kubectlApply(
    JSON.stringify({
      apiVersion: 'telemetry.istio.io/v1',
      kind: 'Telemetry',
      metadata: { name: 'gracegate-access-log', namespace: g.options.namespace },
      spec: { accessLogging: [{ providers: [{ name: 'envoy' }] }] },
    }),
  );
  await waitUntil(
    'every gateway pod to write access-log lines',
    90_000,
    async () => {
      const probe = await ClusterLoad.start({
        baseUrl: url,
        workers: 2,
        mix: [{ weight: 1, spec: { kind: 'slow', ms: 0 } }],
        requestTimeoutMs: 2000,
        durationMs: 3000,
        maxRequests: 20,
      });
      await probe.finish(10_000, false);
      const pods = gatewayPods(g);
      return pods.length > 0 && pods.every((p) => /"GET \/slow\?ms=0 HTTP\/1\.1" 200/.test(podLog(g, p.name))) ? true : undefined;
    },
    1000,
  );
}

function podLog(g: Installed, pod: string, since?: string): string {
  return kubectl(['-n', g.options.namespace, 'logs', pod, '-c', 'istio-proxy', ...(since ? [`--since-time=${since}`] : [])], { timeoutMs: 60_000 });
}

export type MeasureOutcome = {
  load: LoadResult;
  loadP99Ms: number;
  measured: { p99Seconds: number; samples: number; recommendedLongRequestP99Seconds: number };
  loggedLines: number;
};

/** The load, the logs since it started, and measure's answer. */
export async function measureOnLiveLog(g: Installed, url: string, durationMs: number): Promise<MeasureOutcome> {
  // The API takes sinceTime in whole seconds: the load starts after the next whole second, well
  // after the last probe of enableAccessLog.
  const sinceMs = Math.ceil((Date.now() + 1000) / 1000) * 1000;
  await sleep(sinceMs - Date.now() + 200);
  const since = new Date(sinceMs).toISOString();
  const load = await ClusterLoad.start({ baseUrl: url, workers: 16, mix: UNIFORM_MIX, requestTimeoutMs: 10_000, durationMs, mixKey: 11 });
  const result = await load.finish(durationMs + 30_000, false);
  const ok = result.records.filter((r) => r.outcome === 'ok');
  const dir = mkdtempSync(join(tmpdir(), 'gracegate-measure-'));
  try {
    // Envoy flushes its access log on a timer (--file-flush-interval-msec, 10 s by default): read until every request of the load is there, or 30 s.
    const pods = gatewayPods(g);
    const logs = await waitUntil(
      'the access logs to hold the load',
      30_000,
      () => {
        const texts = pods.map((p) => podLog(g, p.name, since));
        const lines = texts.reduce((n, t) => n + (t.match(/"GET \/slow\?ms=\d+ HTTP\/1\.1"/g)?.length ?? 0), 0);
        return lines >= result.records.length ? texts : undefined;
      },
      1000,
    ).catch(() => pods.map((p) => podLog(g, p.name, since)));
    const files = pods.map((p, i) => {
      const file = join(dir, `${p.name}.log`);
      writeFileSync(file, logs[i]!);
      return file;
    });
    const out = run(
      process.execPath,
      [join(REPO_ROOT, 'bin/gracegate.js'), 'measure', 'p99', '--format', 'json', ...files.flatMap((f) => ['--access-log', f])],
      {
        timeoutMs: 60_000,
      },
    );
    const measured = JSON.parse(out) as MeasureOutcome['measured'];
    const loggedLines = files.length;
    return {
      load: result,
      loadP99Ms: nearestRank(
        ok.map((r) => r.endMs - r.startMs),
        0.99,
      ),
      measured,
      loggedLines,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

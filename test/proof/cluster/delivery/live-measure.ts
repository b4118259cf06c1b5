/**
 * `gracegate measure p99` on the real gateway's access log: Istio's `envoy` access-log provider
 * switched on for the gateway's namespace (a Telemetry resource), a load of known durations through
 * HAProxy, then `kubectl logs … -c istio-proxy` of every gateway pod, given to measure as a user
 * would: once since the load started, and once with the README's `--since=24h`, which covers the
 * pod's start, so pilot-agent's and Envoy's own lines (start-up flags, xDS, warnings) come first and
 * among the access log.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadResult, RequestRecord } from '../../../../src/verify/load';
import { nearestRank } from '../../../support/quantile';
import { REPO_ROOT } from '../../../support/repo';
import type { Installed } from '../gateway';
import { gatewayPods } from '../gateway';
import { kubectl, kubectlApply } from '../kubectl';
import { ClusterLoad } from '../load';
import { run, sleep, waitUntil } from '../sh';

/** Durations 20, 40, …, 2000 ms, equally likely: the p99 is near the top, and a p95 or a p90 would be 100-200 ms off it. */
export const DURATION_STEP_MS = 20;

/**
 * measure's seconds (whole ms / 1000) back to whole ms, so that a p99 equal to a bound is not
 * pushed past it by the division's rounding (2002 / 1000 * 1000 is 2001.9999999999998).
 */
export const wholeMs = (seconds: number): number => Math.round(seconds * 1000);
export const UNIFORM_MIX = Array.from({ length: 100 }, (_, i) => ({ weight: 1, spec: { kind: 'slow' as const, ms: DURATION_STEP_MS * (i + 1) } }));

/**
 * Turns on Istio's `envoy` access log (text, stdout) for the namespace's proxies; waits until each
 * gateway pod logs a request. Returns every probe request it sent (some went out before the
 * Telemetry took effect and are in no log).
 */
export async function enableAccessLog(g: Installed, url: string): Promise<RequestRecord[]> {
  const probes: RequestRecord[] = [];
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
        requestTimeoutMs: 10_000,
        durationMs: 3000,
        maxRequests: 20,
      });
      probes.push(...(await probe.finish(20_000, false)).records);
      const pods = gatewayPods(g);
      return pods.length > 0 && pods.every((p) => /"GET \/slow\?ms=0 HTTP\/1\.1" 200/.test(podLog(g, p.name, '24h'))) ? true : undefined;
    },
    1000,
  );
  return probes;
}

/** The istio-proxy log of `pod` since `since` (an RFC 3339 time), or with `--since=24h` (the README's first step). */
function podLog(g: Installed, pod: string, since: string | '24h'): string {
  return kubectl(['-n', g.options.namespace, 'logs', pod, '-c', 'istio-proxy', since === '24h' ? '--since=24h' : `--since-time=${since}`], {
    timeoutMs: 60_000,
  });
}

/** The probe requests of enableAccessLog (`GET /slow?ms=0`), the only other requests the gateway logs. */
const PROBE_LINE = /"GET \/slow\?ms=0 HTTP\/1\.1"/g;

type Measured = {
  p99Seconds: number;
  samples: number;
  recommendedLongRequestP99Seconds: number;
  skippedLines: { count: number; first: string | null; byShape: { shape: string; count: number; first: string }[] };
  invalidLines: { count: number };
};

function measureFiles(dir: string, name: string, pods: readonly { name: string }[], texts: readonly string[]): Measured {
  const files = pods.map((p, i) => {
    const file = join(dir, `${p.name}.${name}.log`);
    writeFileSync(file, texts[i]!);
    return file;
  });
  const out = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'measure', 'p99', '--format', 'json', ...files.flatMap((f) => ['--access-log', f])], {
    timeoutMs: 60_000,
  });
  return JSON.parse(out) as Measured;
}

/**
 * What bounds measure's p99 without timing the machine. For each request, the testapp's `/slow`
 * waits at least the ms asked (Go's time.After), and Envoy's %DURATION% (whole ms, rounded down)
 * runs from the request's first byte in to the response's last byte out, so it spans that wait:
 * asked <= Envoy. The client's duration (Date.now(), whole ms) spans Envoy's, and rounding both
 * down keeps Envoy <= client. With every request in the log once, the same order holds between
 * the nearest-rank p99s: `askedP99Ms <= measure's p99 <= clientP99Ms`, whatever the load.
 */
export type MeasureOutcome = {
  load: LoadResult;
  /** The p99 of the durations the load asked for (20 ms steps): measure's p99 is at least this. */
  askedP99Ms: number;
  /** The p99 of the durations the client timed (HAProxy, the network and its own event loop included): measure's p99 is at most this. */
  clientP99Ms: number;
  measured: Measured;
  loggedLines: number;
  /** The same on the logs from the pods' start (`--since=24h`). */
  fromStart: Measured;
  /** enableAccessLog's probe requests in those logs, each of about 0 ms. */
  probeLines: number;
  /** The asked p99 with those probes counted too (0 ms each): the lower bound from the pods' start. */
  askedWithProbesP99Ms: number;
  /**
   * The upper bound from the pods' start: the larger of measure's p99 since the load and the
   * longest probe the client timed. Adding k values each at most X to a set whose p99 is v
   * leaves at least ceil(0.99 n) + k >= ceil(0.99 (n + k)) values at or below max(v, X).
   */
  fromStartUpperMs: number;
  /** The first line of each pod's log from its start, for the report. */
  firstLines: string[];
  /** The first skipped line of each shape in the logs from the start, as measure named it: `shape: text`. */
  skippedExamples: string[];
};

/** The load, the logs since it started, and measure's answer. */
export async function measureOnLiveLog(g: Installed, url: string, durationMs: number, probes: readonly RequestRecord[]): Promise<MeasureOutcome> {
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
    const measured = measureFiles(dir, 'since-load', pods, logs);
    const fromStartTexts = pods.map((p) => podLog(g, p.name, '24h'));
    const fromStart = measureFiles(dir, 'since-24h', pods, fromStartTexts);
    const probeLines = fromStartTexts.reduce((n, t) => n + (t.match(PROBE_LINE)?.length ?? 0), 0);
    const askedMs = ok.map((r) => (r.spec.kind === 'slow' ? r.spec.ms : 0));
    const probeClientMs = probes.map((r) => r.endMs - r.startMs);
    return {
      load: result,
      askedP99Ms: nearestRank(askedMs, 0.99),
      clientP99Ms: nearestRank(
        ok.map((r) => r.endMs - r.startMs),
        0.99,
      ),
      measured,
      loggedLines: pods.length,
      fromStart,
      probeLines,
      askedWithProbesP99Ms: nearestRank([...askedMs, ...Array<number>(probeLines).fill(0)], 0.99),
      fromStartUpperMs: Math.max(wholeMs(measured.p99Seconds), ...probeClientMs),
      firstLines: fromStartTexts.map((t) => t.split('\n')[0] ?? ''),
      skippedExamples: fromStart.skippedLines.byShape.map((b) => {
        const at = b.first.lastIndexOf(':');
        const pod = pods.findIndex((p) => b.first.slice(0, at).endsWith(`${p.name}.since-24h.log`));
        return `${b.shape}: ${(fromStartTexts[pod]?.split('\n')[Number(b.first.slice(at + 1)) - 1] ?? '?').slice(0, 200)}`;
      }),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

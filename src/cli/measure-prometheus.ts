/**
 * `gracegate measure p99 --prometheus URL`: the request-duration quantiles from a histogram in
 * Prometheus, over a window, through its HTTP API (`/api/v1/query`). Two histograms are known, both
 * in milliseconds: Istio's standard `istio_request_duration_milliseconds` and Envoy's own
 * `http.<prefix>.downstream_rq_time` (`envoy_http_downstream_rq_time` under Istio's stats tags;
 * Istio's default stats matcher drops it: add `downstream_rq_time` to
 * proxyStatsMatcher.inclusionSuffixes to have it). Every call is bounded in time.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { GracegateError } from '../core/errors';
import { recommendP99, requestDurationsOf, type P99Report } from '../measure/p99-report';
import { MAX_DURATION_MS } from '../measure/access-log';

export const HISTOGRAMS = {
  istio: { metric: 'istio_request_duration_milliseconds', byRoute: 'destination_service' },
  envoy: { metric: 'envoy_http_downstream_rq_time', byRoute: 'http_conn_manager_prefix' },
} as const;
export type HistogramName = keyof typeof HISTOGRAMS;

const QUERY_TIMEOUT_MS = 10_000;
/** Bounds the answer (a vector of one or a few series): a wrong URL must not stream a page at us. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export class PrometheusError extends GracegateError {}

type Vector = { metric: Record<string, string>; value: [number, string] }[];

function get(url: URL): Promise<{ status: number; body: string }> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(url, { signal: AbortSignal.timeout(QUERY_TIMEOUT_MS), headers: { accept: 'application/json' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
        if (body.length > MAX_ANSWER_BYTES) req.destroy(new Error(`answer larger than ${MAX_ANSWER_BYTES} bytes`));
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

async function query(base: URL, expr: string): Promise<Vector> {
  const url = new URL('api/v1/query', base.href.endsWith('/') ? base : new URL(`${base.href}/`));
  url.searchParams.set('query', expr);
  let answer: { status: number; body: string };
  try {
    answer = await get(url);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new PrometheusError(`cannot reach Prometheus at ${base.href}: ${e.code ?? e.name}${e.message && e.code === undefined ? ` ${e.message}` : ''}`);
  }
  let parsed: { status?: string; error?: string; data?: { resultType?: string; result?: Vector } };
  try {
    parsed = JSON.parse(answer.body) as typeof parsed;
  } catch {
    throw new PrometheusError(`${base.href} is not a Prometheus HTTP API (HTTP ${answer.status}, not JSON): GET ${url.pathname}`);
  }
  if (parsed.status !== 'success' || parsed.data?.resultType !== 'vector') {
    throw new PrometheusError(`Prometheus at ${base.href} refused the query (HTTP ${answer.status}): ${parsed.error ?? 'no vector in the answer'}: ${expr}`);
  }
  return parsed.data.result ?? [];
}

const value = (v: Vector) => (v.length === 0 ? NaN : Number(v[0]!.value[1]));

export interface PrometheusSource {
  readonly url: string;
  readonly histogram: HistogramName | 'auto';
  /** A Prometheus range, e.g. `1d`. */
  readonly window: string;
  /** Label matchers without braces, e.g. `reporter="source",source_workload="igw"`. */
  readonly selector: string;
}

export async function measureFromPrometheus(source: PrometheusSource): Promise<P99Report> {
  let base: URL;
  try {
    base = new URL(source.url);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new PrometheusError(`--prometheus must be an http(s) URL, got '${source.url}'`);
  }
  const candidates: HistogramName[] = source.histogram === 'auto' ? ['istio', 'envoy'] : [source.histogram];
  let chosen: HistogramName | undefined;
  for (const name of candidates) {
    const found = await query(base, `count(${HISTOGRAMS[name].metric}_bucket{${source.selector}})`);
    if (value(found) > 0) {
      chosen = name;
      break;
    }
  }
  if (!chosen) {
    throw new PrometheusError(
      `no histogram ${candidates.map((n) => `${HISTOGRAMS[n].metric}_bucket{${source.selector}}`).join(' or ')} in Prometheus at ${base.href} (Envoy's needs downstream_rq_time in proxyStatsMatcher.inclusionSuffixes)`,
    );
  }
  const { metric, byRoute } = HISTOGRAMS[chosen];
  const sel = `{${source.selector}}`;
  const buckets = `increase(${metric}_bucket${sel}[${source.window}])`;
  const quantile = async (q: number) => value(await query(base, `histogram_quantile(${q}, sum by (le) (${buckets}))`)) / 1000;
  const samples = Math.round(value(await query(base, `sum(increase(${metric}_count${sel}[${source.window}]))`)));
  const [p50, p99, p999] = [await quantile(0.5), await quantile(0.99), await quantile(0.999)];
  if (!Number.isFinite(p99) || !(samples > 0)) {
    throw new PrometheusError(`${metric} has no requests in the last ${source.window} at ${base.href}: widen --window`);
  }
  const routes = await query(base, `topk(10, histogram_quantile(0.99, sum by (le, ${byRoute}) (${buckets})))`);
  const counts = await query(base, `sum by (${byRoute}) (increase(${metric}_count${sel}[${source.window}]))`);
  const countOf = (route: string) => Math.round(value(counts.filter((c) => (c.metric[byRoute] ?? '') === route)));
  const now = new Date();
  return {
    source: { kind: 'prometheus', url: base.href, metric, histogram: chosen, window: source.window, selector: source.selector },
    window: { from: null, to: now.toISOString() },
    samples,
    p50Seconds: p50,
    p99Seconds: p99,
    p999Seconds: p999,
    maxSeconds: null,
    recommendedLongRequestP99Seconds: recommendP99(p99),
    recommendedRequestDurations: requestDurationsOf(p50, p99, p999),
    reason: `p99 of about ${samples} requests in the last ${source.window} (${metric}; Prometheus's increase() extrapolates the count, and histogram_quantile estimates within a bucket), rounded up to whole seconds; the plan's drain timeout is ceil(1.2 x this value)`,
    warnings: [
      'a histogram cannot tell long-lived streams (WebSocket, gRPC streams, SSE) from requests: they are in this p99; the access logs can keep them apart',
      ...(samples < 1000 ? [`only ${samples} requests in the window: widen --window`] : []),
    ],
    longestByRoute: routes
      .filter((r) => Number.isFinite(Number(r.value[1])))
      .map((r) => ({ route: r.metric[byRoute] ?? '-', requests: countOf(r.metric[byRoute] ?? ''), p99Seconds: Number(r.value[1]) / 1000, maxSeconds: null }))
      .sort((a, b) => b.p99Seconds - a.p99Seconds),
    longestRequests: [],
    streams: null,
    grpc: null,
    skippedLines: { count: 0, first: null, byShape: [] },
    invalidLines: { count: 0, first: null, reason: null, boundMs: MAX_DURATION_MS },
  };
}

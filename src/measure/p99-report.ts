/**
 * What `gracegate measure p99` found, and the value it recommends for
 * `spec.traffic.longRequestP99Seconds`. Pure: the readers (access logs, Prometheus) fill it in.
 *
 * Long-lived streams (WebSocket and other upgrades, and whatever `--stream-path` names: SSE, gRPC
 * streaming methods) are kept apart: one open stream lasts as long as the client wants, so mixed in
 * they would turn a request p99 into a connection lifetime. A drain cannot wait for them anyway:
 * they end at the drain timeout and must reconnect (docs/measure.md).
 */
import { MAX_DURATION_SECONDS } from '../core/duration';
import { CompactHistogram, DurationHistogram } from './duration-histogram';
import { MAX_DURATION_MS, SKIPPED_SHAPES, type LogEntry, type SkippedShape } from './access-log';
import { longestRequestSeconds } from '../plan/timings';
import { formatCount } from '../plan/connect-cut-estimate';
import { MAX_REQUEST_MS } from '../loss/duration-dist';

/** Routes tracked one by one; the rest are summed under OTHER_ROUTES (bounded memory). */
export const MAX_ROUTES = 500;
export const OTHER_ROUTES = '(other routes)';
const LONGEST_KEPT = 10;

/**
 * spec.traffic.requestDurations from the measured lengths: a log-normal through the p50 and the p99,
 * none longer than the longest seen (or the p99.9 where single lengths are not known); every
 * request the same length, `fixed`. Null where a length is past what the loss model follows.
 */
export function requestDurationsOf(p50Seconds: number, p99Seconds: number, maxSeconds: number): string | null {
  const ms = (s: number): number => Math.max(1, Math.round(s * 1000));
  const [p50, p99, max] = [ms(p50Seconds), ms(p99Seconds), ms(Math.max(maxSeconds, p99Seconds))];
  if (max > MAX_REQUEST_MS) return null;
  if (p99 <= p50) return `fixed:${p99}ms`;
  return `lognormal:p50=${p50}ms,p99=${p99}ms,max=${max}ms`;
}

/** Routes the report warns of at most (the worst first). */
const ROUTE_WARNINGS = 5;

function coverText(
  route: string,
  p99Ms: number,
  maxMs: number,
  drainMs: number,
  recommended: number,
  covering: number,
  cutNow: string,
  cutCovering: string,
): string {
  const what = p99Ms > drainMs ? `its p99 (${p99Ms / 1000} s)` : `its longest request (${maxMs / 1000} s)`;
  return `route ${route}: ${what} outlasts the drain timeout the recommended ${recommended} s leads to (ceil(1.2 x ${recommended}) = ${drainMs / 1000} s): about ${cutNow} of it run longer, and a pod's termination cuts those in flight. spec.traffic.longRequestP99Seconds: ${covering} covers its longest (drain timeout ${longestRequestSeconds(covering)} s) and leaves about ${cutCovering}; or move the route to a gateway of its own`;
}

/** Below this many requests the p99 rests on the longest handful: the report says so. */
export const FEW_SAMPLES = 1000;

export interface LongRequest {
  readonly seconds: number;
  readonly route: string;
  readonly method: string;
  readonly path: string;
  readonly code: number;
  readonly flags: string;
  readonly startTime: string;
}

export interface RouteFigures {
  readonly route: string;
  readonly requests: number;
  readonly p99Seconds: number;
  /** null where the source has no single durations (a histogram). */
  readonly maxSeconds: number | null;
}

export interface P99Report {
  readonly source: Readonly<Record<string, unknown>>;
  readonly window: { readonly from: string | null; readonly to: string | null };
  readonly samples: number;
  readonly p50Seconds: number;
  readonly p99Seconds: number;
  readonly p999Seconds: number;
  readonly maxSeconds: number | null;
  readonly recommendedLongRequestP99Seconds: number;
  /** For spec.traffic.requestDurations (the plan ranks its orders by it); null where the lengths do not fit the grammar. */
  readonly recommendedRequestDurations: string | null;
  readonly reason: string;
  readonly warnings: readonly string[];
  readonly longestByRoute: readonly RouteFigures[];
  readonly longestRequests: readonly LongRequest[];
  readonly streams: {
    readonly count: number;
    readonly upgrades: number;
    readonly byStreamPath: number;
    readonly p99Seconds: number | null;
    readonly maxSeconds: number | null;
    readonly note: string;
  } | null;
  readonly grpc: { readonly count: number; readonly p99Seconds: number | null } | null;
  /** Lines that are no access-log line (pilot-agent's and Envoy's own, …), by shape: skipped. */
  readonly skippedLines: {
    readonly count: number;
    readonly first: string | null;
    readonly byShape: readonly { readonly shape: string; readonly count: number; readonly first: string }[];
  };
  /** Access-log lines whose duration is no number of ms up to MAX_DURATION_MS: never measured. */
  readonly invalidLines: { readonly count: number; readonly first: string | null; readonly reason: string | null; readonly boundMs: number };
}

const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

/** How a route is named in the report: Envoy's route name, else authority and first path segment. */
export function routeKey(e: LogEntry): string {
  if (e.route !== null) return e.route;
  const path = e.path.split('?')[0] ?? '';
  const segment = /^\/[^/]*/.exec(path)?.[0] ?? '/';
  return `${e.authority || '-'}${segment}`;
}

/** gRPC calls look like POST /package.Service/Method over HTTP/2. */
const GRPC_PATH = /^\/[\w.]+\.[\w]+\/[\w]+$/;

/**
 * The value for spec.traffic.longRequestP99Seconds: the p99 rounded up to whole seconds, at least 1.
 * Rounding up, never down: the drain timeout is ceil(1.2 x this), and a drain cut short cuts requests.
 */
export function recommendP99(p99Seconds: number): number {
  return Math.max(1, Math.ceil(p99Seconds - 1e-9));
}

export class AccessLogSummary {
  readonly requests = new DurationHistogram();
  private readonly streams = new DurationHistogram();
  private readonly grpc = new CompactHistogram();
  private readonly routes = new Map<string, CompactHistogram>();
  private readonly longest: LongRequest[] = [];
  private upgrades = 0;
  private byStreamPath = 0;
  private from: string | null = null;
  private to: string | null = null;
  private readonly skipped = new Map<SkippedShape, { count: number; first: string }>();
  private invalidCount = 0;
  private firstInvalid: { where: string; reason: string } | null = null;
  private entries = 0;

  constructor(private readonly streamPaths: readonly RegExp[] = []) {}

  /** A line that is no access-log line, at `where` (`file:line`). */
  skip(shape: SkippedShape, where: string): void {
    const seen = this.skipped.get(shape);
    if (seen) seen.count++;
    else this.skipped.set(shape, { count: 1, first: where });
  }

  /** An access-log line whose duration cannot be measured, and why. */
  invalid(reason: string, where: string): void {
    this.invalidCount++;
    this.firstInvalid ??= { where, reason };
  }

  /** Access-log lines read, measured or invalid (0: the input holds no access log). */
  get accessLogLines(): number {
    return this.entries + this.invalidCount;
  }

  /** Skipped lines by shape, in the order first met. */
  get skippedByShape(): ReadonlyMap<SkippedShape, { readonly count: number; readonly first: string }> {
    return this.skipped;
  }

  add(e: LogEntry): void {
    this.entries++;
    if (e.startTime) {
      if (this.from === null || e.startTime < this.from) this.from = e.startTime;
      if (this.to === null || e.startTime > this.to) this.to = e.startTime;
    }
    const upgrade = e.code === 101;
    const streamPath = !upgrade && this.streamPaths.some((re) => re.test(e.path));
    if (upgrade || streamPath) {
      if (upgrade) this.upgrades++;
      else this.byStreamPath++;
      this.streams.add(e.durationMs);
      return;
    }
    this.requests.add(e.durationMs);
    if (e.protocol === 'HTTP/2' && GRPC_PATH.test(e.path.split('?')[0] ?? '')) this.grpc.add(e.durationMs);
    const key = routeKey(e);
    let route = this.routes.get(key);
    if (!route) {
      route = this.routes.size < MAX_ROUTES ? new CompactHistogram() : (this.routes.get(OTHER_ROUTES) ?? new CompactHistogram());
      this.routes.set(this.routes.size < MAX_ROUTES ? key : OTHER_ROUTES, route);
    }
    route.add(e.durationMs);
    this.keepIfLongest(e, key);
  }

  private keepIfLongest(e: LogEntry, route: string): void {
    const smallest = this.longest[this.longest.length - 1];
    if (this.longest.length >= LONGEST_KEPT && smallest && smallest.seconds * 1000 >= e.durationMs) return;
    this.longest.push({
      seconds: e.durationMs / 1000,
      route,
      method: e.method,
      path: e.path.slice(0, 200),
      code: e.code,
      flags: e.flags,
      startTime: e.startTime,
    });
    this.longest.sort((a, b) => b.seconds - a.seconds);
    if (this.longest.length > LONGEST_KEPT) this.longest.pop();
  }

  /**
   * The routes whose p99, or longest request, outlasts the drain timeout the recommended value leads
   * to (ceil(1.2 x it), src/plan/timings.ts): each named, with the value that would cover it and the
   * requests a day each choice leaves longer than its drain timeout (cut, if a pod terminates while
   * they run). The worst ROUTE_WARNINGS of them.
   */
  private routeWarnings(recommended: number): string[] {
    const drainMs = longestRequestSeconds(recommended) * 1000;
    const windowSeconds = this.from !== null && this.to !== null ? (Date.parse(this.to) - Date.parse(this.from)) / 1000 : Number.NaN;
    const perDay = (n: number): string =>
      Number.isFinite(windowSeconds) && windowSeconds >= 60
        ? `${formatCount((n * 86_400) / windowSeconds)} a day`
        : `${n} in this log (its window is too short to scale to a day)`;
    return [...this.routes.entries()]
      .map(([route, h]) => ({ route, h, p99Ms: h.quantileMs(0.99) ?? 0, maxMs: h.maxMs }))
      .filter((r) => r.route !== OTHER_ROUTES && (r.p99Ms > drainMs || r.maxMs > drainMs))
      .sort((a, b) => b.p99Ms - a.p99Ms || b.maxMs - a.maxMs)
      .slice(0, ROUTE_WARNINGS)
      .map(({ route, h, p99Ms, maxMs }) => {
        // The smallest whole seconds whose drain timeout covers the route's longest request seen.
        let covering = Math.max(recommended, Math.ceil(maxMs / 1200 - 1e-9));
        while (longestRequestSeconds(covering) * 1000 < maxMs) covering++;
        const after = longestRequestSeconds(covering) * 1000;
        return coverText(route, p99Ms, maxMs, drainMs, recommended, covering, perDay(h.countAboveMs(drainMs)), perDay(h.countAboveMs(after)));
      });
  }

  report(source: Record<string, unknown>): P99Report {
    const q = (h: DurationHistogram, x: number) => (h.quantileMs(x) ?? 0) / 1000;
    const p99 = q(this.requests, 0.99);
    const streamCount = this.upgrades + this.byStreamPath;
    const warnings: string[] = [];
    if (this.requests.count < FEW_SAMPLES)
      warnings.push(
        `only ${this.requests.count} requests: the p99 rests on the longest ${Math.max(1, Math.ceil(this.requests.count / 100))}; measure over a longer window`,
      );
    const byShape = [...this.skipped.entries()].map(([shape, v]) => ({ shape: SKIPPED_SHAPES[shape], count: v.count, first: v.first }));
    if (recommendP99(p99) > MAX_DURATION_SECONDS)
      warnings.push(
        `a p99 of ${p99} s is longer than any wait gracegate can time (${MAX_DURATION_SECONDS} s, src/core/duration.ts): plan refuses it as spec.traffic.longRequestP99Seconds; keep such streams apart with --stream-path`,
      );
    warnings.push(...this.routeWarnings(recommendP99(p99)));
    // Shapes in the order first met: the first shape's first line is the first line skipped.
    const firstSkipped = byShape[0]?.first ?? null;
    return {
      source,
      window: { from: this.from, to: this.to },
      samples: this.requests.count,
      p50Seconds: q(this.requests, 0.5),
      p99Seconds: p99,
      p999Seconds: q(this.requests, 0.999),
      maxSeconds: seconds(this.requests.maxMs < 0 ? null : this.requests.maxMs),
      recommendedLongRequestP99Seconds: recommendP99(p99),
      recommendedRequestDurations: requestDurationsOf(
        q(this.requests, 0.5),
        p99,
        seconds(this.requests.maxMs < 0 ? null : this.requests.maxMs) ?? q(this.requests, 0.999),
      ),
      reason: `p99 of ${this.requests.count} request durations (%DURATION%, first byte in to last byte out)${streamCount ? `, ${streamCount} long-lived stream(s) kept apart` : ''}, rounded up to whole seconds; the plan's drain timeout is ceil(1.2 x this value)`,
      warnings,
      longestByRoute: [...this.routes.entries()]
        .map(([route, h]) => ({ route, requests: h.count, p99Seconds: (h.quantileMs(0.99) ?? 0) / 1000, maxSeconds: h.maxMs / 1000 }))
        .sort((a, b) => b.p99Seconds - a.p99Seconds || (b.maxSeconds ?? 0) - (a.maxSeconds ?? 0))
        .slice(0, 10),
      longestRequests: [...this.longest],
      streams:
        streamCount === 0
          ? null
          : {
              count: streamCount,
              upgrades: this.upgrades,
              byStreamPath: this.byStreamPath,
              p99Seconds: seconds(this.streams.quantileMs(0.99)),
              maxSeconds: seconds(this.streams.maxMs),
              note: 'not in the p99: a stream lasts as long as its client wants; at the drain timeout it is cut and must reconnect (docs/measure.md)',
            },
      grpc: this.grpc.count === 0 ? null : { count: this.grpc.count, p99Seconds: seconds(this.grpc.quantileMs(0.99)) },
      skippedLines: { count: byShape.reduce((n, b) => n + b.count, 0), first: firstSkipped, byShape },
      invalidLines: { count: this.invalidCount, first: this.firstInvalid?.where ?? null, reason: this.firstInvalid?.reason ?? null, boundMs: MAX_DURATION_MS },
    };
  }
}

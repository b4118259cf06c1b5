/**
 * The metrics port: GET /metrics only, all interfaces, read-only. Prometheus scrapes the pod IP
 * (a PodMonitor, or a scrape job on the port's name); the port is in no Service, and nothing on
 * it changes the sidecar's state. Istio's 15020 endpoint cannot carry these metrics on a gateway
 * (pilot-agent merges application metrics for sidecar proxies only; docs/observability.md).
 *
 * It remembers when it was last scraped, so that a terminating sidecar can wait for Prometheus to
 * read its final numbers before it exits (`finalScrape`).
 */
import type * as http from 'node:http';
import type { Clock } from './types';
import type { HcMachine } from './machine';
import { METRICS_CONTENT_TYPE, renderMetrics, type MetricsContext } from './metrics';
import { createBoundedServer, pathOf, send } from './http-limits';
import { PATHS } from '../contract/hc';
import { plainAddress, witnessSources } from './witness-sources';

/** Prometheus servers (an HA pair, a second one during an upgrade) and a curl: far below this. */
export const METRICS_CONNECTION_LIMITS = { total: 16, perSource: 8 } as const;

export interface MetricsEndpoint {
  readonly server: http.Server;
  /** When /metrics was last answered (epoch ms), or null. */
  lastScrapeAt(): number | null;
  /** The time between the last two scrapes (ms), or null before the second. */
  scrapeIntervalMs(): number | null;
  /**
   * Resolves at the next scrape of /metrics (which renders everything known by now), or after
   * `boundMs`, whichever comes first: true when a scrape came.
   */
  nextScrape(boundMs: number): Promise<boolean>;
}

/**
 * Who counts as Prometheus for the final scrape. Anyone who reaches the port may read /metrics, but
 * any GET after SIGTERM used to end the final-scrape wait, so whoever reached the metrics port
 * could cut it short and the real Prometheus then missed the final numbers. Now: loopback (the pod
 * itself), the addresses `metricsScrapers` names, or, without any named, a source that scraped
 * before SIGTERM (the pod's Prometheus, which scrapes it on its interval all its life).
 */
export interface Scrapers {
  counts(source: string, terminating: boolean): boolean;
}

export function scrapersFrom(named: readonly string[]): Scrapers {
  // Loopback (the pod itself) always, as the witness port's sources do.
  const list = witnessSources({ hostIps: [], gateways: [], allowFrom: named });
  const seen = new Set<string>();
  return {
    counts(source, terminating) {
      const plain = plainAddress(source);
      if (list.allows(plain)) return true;
      if (named.length > 0) return false;
      if (!terminating) seen.add(plain);
      return seen.has(plain);
    },
  };
}

export function createMetricsEndpoint(machine: HcMachine, context: MetricsContext, clock: Clock, scrapers: Scrapers = scrapersFrom([])): MetricsEndpoint {
  let last: number | null = null;
  let interval: number | null = null;
  const waiting = new Set<{ done(scraped: boolean): void }>();
  const server = createBoundedServer(METRICS_CONNECTION_LIMITS, (req, res) => {
    if (pathOf(req) !== PATHS.metrics) return send(res, 404, 'not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
    send(res, 200, renderMetrics(machine, context), { 'content-type': METRICS_CONTENT_TYPE });
    if (req.method !== 'GET') return;
    if (!scrapers.counts(req.socket.remoteAddress ?? '', context.terminatingSince() !== null)) return;
    const now = clock.now();
    if (last !== null) interval = now - last;
    last = now;
    for (const w of waiting) w.done(true);
  });
  return {
    server,
    lastScrapeAt: () => last,
    scrapeIntervalMs: () => interval,
    nextScrape(boundMs) {
      return new Promise((resolve) => {
        const entry = {
          done(scraped: boolean) {
            waiting.delete(entry);
            cancel();
            resolve(scraped);
          },
        };
        const cancel = clock.setTimer(boundMs, () => entry.done(false));
        waiting.add(entry);
      });
    },
  };
}

/** What the final-scrape decision reads. */
export type FinalScrapeInput = {
  /** The configured bound (finalScrapeWaitSeconds, in ms). */
  boundMs: number;
  metricsPort: boolean;
  /** A termination sequence ran: only a termination has final numbers to hand over. */
  sequenceRan: boolean;
  lastScrapeAt: number | null;
  scrapeIntervalMs: number | null;
  now: number;
};

/**
 * How long to wait for one more scrape after SIGTERM, and why: not at all where nothing scraped
 * /metrics during the pod's life (no Prometheus to wait for), else until the next scrape is due
 * (the last one + the interval seen + a quarter of it, at least 1 s of slack), never past the bound.
 */
export function finalScrapeWait(i: FinalScrapeInput): { waitMs: number; reason: string } {
  if (i.boundMs <= 0) return { waitMs: 0, reason: 'finalScrapeWaitSeconds is 0' };
  if (!i.metricsPort) return { waitMs: 0, reason: 'no metrics port' };
  if (!i.sequenceRan) return { waitMs: 0, reason: 'no termination sequence ran (a restart): nothing final to hand over' };
  if (i.lastScrapeAt === null) return { waitMs: 0, reason: 'nothing scraped /metrics while the pod lived: no Prometheus to wait for' };
  if (i.scrapeIntervalMs === null) return { waitMs: i.boundMs, reason: 'scraped once: waiting for the next scrape, at most the bound' };
  const due = i.lastScrapeAt + i.scrapeIntervalMs + Math.max(1000, i.scrapeIntervalMs / 4);
  const waitMs = Math.max(0, Math.min(i.boundMs, due - i.now));
  return {
    waitMs,
    reason: `scraped every ${Math.round(i.scrapeIntervalMs / 100) / 10} s: waiting for the next scrape, at most ${Math.round(waitMs / 100) / 10} s`,
  };
}

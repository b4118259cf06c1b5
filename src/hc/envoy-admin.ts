/**
 * The Envoy admin adapter: the few admin calls the sidecar makes, each with a timeout
 * (AbortSignal.timeout) and a size cap, and each rejecting on anything but the expected answer.
 * It reads `/server_info` once (version, drain strategy) to pick the drain calls of that version
 * (envoy-version.ts) and reports what it learned through `profile()`.
 */
import * as http from 'node:http';
import { compileCounting, countingBasis, parseStatsText, parseStatsTextInSlices, type Count, type CountingRules } from './envoy-stats';
import { drainProfileFor, formatVersion, parseEnvoyVersion, statsGaugesOnly, type DrainProfile } from './envoy-version';
import type { EnvoyPort, EnvoyProfile, EnvoyServerState, Logger } from './types';

/** GET /stats of the statistics whose names match `filter` (a regular expression). */
export function statsPath(filter: string): string {
  return `/stats?filter=${encodeURIComponent(filter)}`;
}

/** The two statistics that say a drain reached Envoy (its /ready answers LIVE all the same). */
export const DRAIN_STATS_PATH = statsPath('^listener_manager\\.(listener_stopped|total_listeners_draining)$');

/**
 * The statistics that say Envoy serves what it was sent (listener_manager and cluster_manager, which
 * Istio's stats matcher keeps by default): the LDS and CDS updates applied, and the listeners and
 * clusters still warming. A listener waits warming for its first RDS answer, a cluster for its
 * endpoints, while /ready already says LIVE.
 */
export const CONFIG_STATS = {
  ldsApplied: 'listener_manager.lds.update_success',
  listenersWarming: 'listener_manager.total_listeners_warming',
  cdsApplied: 'cluster_manager.cds.update_success',
  clustersWarming: 'cluster_manager.warming_clusters',
} as const;
export const CONFIG_STATS_PATH = statsPath(
  `^(${Object.values(CONFIG_STATS)
    .map((n) => n.replace(/\./g, '\\.'))
    .join('|')})$`,
);

/**
 * What a `/stats` answer of CONFIG_STATS_PATH says: `waiting` null when Envoy serves its
 * configuration, else what it waits for; `missing`, the warming gauges the answer lacks. An xDS
 * Envoy does not subscribe to has no update counter and is not waited for (a static bootstrap).
 * Every Envoy has both warming gauges, but a stats matcher can drop them: then nothing here says
 * a listener is still warming, and the sidecar says so (a warning) rather than hold the pod out of
 * the LB for good.
 */
export function configServedFrom(body: string): { waiting: string | null; missing: string[] } {
  const stats = new Map(parseStatsText(body).map((s) => [s.name, s.value]));
  const waiting: string[] = [];
  const missing: string[] = [];
  for (const name of [CONFIG_STATS.listenersWarming, CONFIG_STATS.clustersWarming]) {
    const v = stats.get(name);
    if (v === undefined) missing.push(name);
    else if (v > 0) waiting.push(`${name} ${v}`);
  }
  for (const name of [CONFIG_STATS.ldsApplied, CONFIG_STATS.cdsApplied]) if (stats.get(name) === 0) waiting.push(`${name} 0`);
  return { waiting: waiting.length === 0 ? null : `Envoy does not serve its configuration yet: ${waiting.join(', ')}`, missing };
}

export class EnvoyAdminError extends Error {}

/**
 * Largest admin answer read. `/stats` is asked with a `filter`, so Envoy sends only the candidate
 * lines: a few per listener and HTTP connection manager (a gateway with a thousand listeners is
 * under 200 KiB). Anything bigger is refused as garbage rather than parsed.
 */
export const MAX_BODY_BYTES = 1024 * 1024;
const SERVER_STATES: readonly EnvoyServerState[] = ['LIVE', 'DRAINING', 'PRE_INITIALIZING', 'INITIALIZING'];

export interface EnvoyAdminOptions {
  /** e.g. http://127.0.0.1:15000 */
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly counting: CountingRules;
  /** Where the adapter says what it learned (version, drain calls, counting basis). */
  readonly log?: Logger;
  /** Epoch milliseconds, for the /server_info retry backoff. @default Date.now */
  readonly now?: () => number;
}

/**
 * A failing `/server_info` (404 from a restricted admin, a proxy without it) is tried again after
 * 1 s, then twice as long each time, at most every minute: it is asked on every poll until it
 * answers, and warned about once (10 warnings a second at a 100 ms poll, forever, before).
 */
export const SERVER_INFO_BACKOFF = { firstMs: 1_000, maxMs: 60_000 } as const;

interface AdminResponse {
  readonly status: number;
  readonly body: string;
}

/** One admin request on its own connection (no pooling: a poll never waits behind another). */
export function adminRequest(baseUrl: string, method: 'GET' | 'POST', path: string, timeoutMs: number): Promise<AdminResponse> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => {
      const message = err.name === 'TimeoutError' || err.name === 'AbortError' ? `no answer within ${timeoutMs}ms` : err.message;
      reject(new EnvoyAdminError(`${method} ${url.pathname}: ${message}`));
    };
    const req = http.request(url, { method, agent: false, signal: AbortSignal.timeout(timeoutMs), headers: { connection: 'close' } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          res.destroy();
          fail(new Error(`answer larger than ${MAX_BODY_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

interface ServerInfo {
  readonly version?: unknown;
  readonly command_line_options?: { readonly drain_strategy?: unknown };
}

export function createEnvoyAdmin(options: EnvoyAdminOptions): EnvoyPort {
  const counter = compileCounting(options.counting);
  // No `usedonly`: a gauge that exists but was never set must read as 0 (a count without any
  // counted line is refused, envoy-stats.ts), and one Envoy's stats matcher dropped must read as
  // absent (that HCM is then counted by its connections).
  const filteredPath = statsPath(counter.filter);
  let countPath = filteredPath;
  const log: Logger = options.log ?? (() => {});
  const call = (method: 'GET' | 'POST', path: string) => adminRequest(options.baseUrl, method, path, options.timeoutMs);
  const expectOk = async (path: string) => {
    const res = await call('POST', path);
    if (res.status !== 200) throw new EnvoyAdminError(`POST ${path}: HTTP ${res.status} ${res.body.trim().slice(0, 120)}`);
  };
  /** The body of a GET /stats answered 200. */
  const getStats = async (path: string): Promise<string> => {
    const res = await call('GET', path);
    if (res.status !== 200) throw new EnvoyAdminError(`GET /stats: HTTP ${res.status} ${res.body.trim().slice(0, 120)}`);
    return res.body;
  };

  let versionString: string | null = null;
  let drainStrategy: string | null = null;
  let drain: DrainProfile = drainProfileFor(null);
  let counting: EnvoyProfile['counting'] = null;
  let lastCount: EnvoyProfile['lastCount'] = null;
  const now = options.now ?? Date.now;
  let infoFailures = 0;
  let infoLastError = '';
  let infoNextAttemptAt = 0;
  let warnedMissingConfigStats = false;

  /**
   * Reads /server_info once it answers; until then the fallback calls stand. A failure is warned
   * about once and tried again with a backoff (SERVER_INFO_BACKOFF). Never throws.
   */
  const learnServerInfo = async () => {
    if (versionString !== null || now() < infoNextAttemptAt) return;
    try {
      const res = await call('GET', '/server_info');
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      const info = JSON.parse(res.body) as ServerInfo;
      versionString = typeof info.version === 'string' ? info.version : '';
      const strategy = info.command_line_options?.drain_strategy;
      drainStrategy = typeof strategy === 'string' ? strategy : null;
    } catch (err) {
      infoFailures++;
      infoLastError = (err as Error).message;
      const backoffMs = Math.min(SERVER_INFO_BACKOFF.firstMs * 2 ** (infoFailures - 1), SERVER_INFO_BACKOFF.maxMs);
      infoNextAttemptAt = now() + backoffMs;
      if (infoFailures === 1) {
        log(
          'warn',
          `GET /server_info failed: Envoy version unknown, the drain uses the fallback calls until it answers; tried again after ${backoffMs / 1000} s, then at most every ${SERVER_INFO_BACKOFF.maxMs / 1000} s, without another warning`,
          { error: infoLastError },
        );
      }
      return;
    }
    if (infoFailures > 0) log('info', `GET /server_info answered after ${infoFailures} failed ${infoFailures === 1 ? 'try' : 'tries'}`);
    const version = parseEnvoyVersion(versionString);
    drain = drainProfileFor(version);
    countPath = statsGaugesOnly(version) ? `${filteredPath}&type=Gauges` : filteredPath;
    log(
      drain.basis === 'measured' ? 'info' : 'warn',
      `Envoy ${version ? formatVersion(version) : 'of unknown version'}: drain calls ${drain.calls.join(', ')}`,
      {
        versionString,
        basis: drain.basis,
        why: drain.why,
        drainStrategy,
      },
    );
    if (drainStrategy !== null && drainStrategy.toLowerCase() !== 'immediate') {
      log(
        'warn',
        `Envoy runs with --drain-strategy ${drainStrategy}: after the drain, connections are told to close only gradually over --drain-time-s (Istio passes immediate)`,
      );
    }
  };

  const readCount = async (): Promise<Count> => {
    const body = await getStats(countPath);
    let count: Count;
    try {
      count = counter.count(await parseStatsTextInSlices(body));
    } catch (err) {
      throw new EnvoyAdminError(`GET /stats: ${(err as Error).message}`);
    }
    noteCounting(count);
    lastCount = { total: count.total, requests: count.requests, otherConnections: count.otherConnections, upgrades: count.upgrades };
    return count;
  };

  const noteCounting = (count: Count) => {
    const basis = countingBasis(count);
    const byConnections = Object.entries(count.hcms)
      .filter(([, how]) => how === 'connections')
      .map(([prefix]) => prefix);
    if (counting !== null && counting.basis === basis && JSON.stringify(counting.hcms) === JSON.stringify(count.hcms)) return;
    counting = { basis, hcms: count.hcms };
    if (byConnections.length === 0) {
      log('info', 'counting in-flight requests of the HTTP connection managers, plus connections without one', { hcms: count.hcms });
    } else {
      log(
        'warn',
        `Envoy exposes no downstream_rq_active for ${byConnections.map((p) => `http.${p}`).join(', ')}: counted by connections, which a drain never closes while idle (an LB's pooled connections hold the count until drainTimeoutSeconds); Istio: add proxyStatsMatcher.inclusionSuffixes [downstream_rq_active]`,
        { hcms: count.hcms },
      );
    }
  };

  return {
    async serverState() {
      const res = await call('GET', '/ready');
      const state = res.body.trim() as EnvoyServerState;
      if (!SERVER_STATES.includes(state) || (res.status === 200) !== (state === 'LIVE')) {
        throw new EnvoyAdminError(`GET /ready: unexpected answer HTTP ${res.status} ${JSON.stringify(res.body.slice(0, 80))}`);
      }
      if (state === 'LIVE' && versionString === null) {
        await learnServerInfo();
        // One count while serving, so /state shows how the drain will count before it starts.
        if (counting === null) await readCount().catch(() => undefined);
      }
      return state;
    },
    async inFlight() {
      const first = await readCount();
      // A 0 is confirmed by a second read: Envoy's gauges are read while workers update them, and
      // a connection closing mid-read can take a listener's count down before its HCM's.
      return first.total === 0 ? (await readCount()).total : first.total;
    },
    async drainSent() {
      // listener_stopped counts listeners a drain stopped (the plain drain_listeners this sidecar
      // sends after the graceful one); total_listeners_draining those a graceful drain is removing.
      const body = await getStats(DRAIN_STATS_PATH);
      return body.split('\n').some((line) => {
        const m = /^listener_manager\.(listener_stopped|total_listeners_draining): (\d+)\s*$/.exec(line);
        return m !== null && Number(m[2]) > 0;
      });
    },
    async configServed() {
      const body = await getStats(CONFIG_STATS_PATH);
      let served: ReturnType<typeof configServedFrom>;
      try {
        served = configServedFrom(body);
      } catch (err) {
        throw new EnvoyAdminError(`GET /stats: ${(err as Error).message}`);
      }
      if (served.missing.length > 0 && !warnedMissingConfigStats) {
        warnedMissingConfigStats = true;
        log(
          'warn',
          `Envoy's /stats has no ${served.missing.join(' or ')}: the start cannot wait for warming listeners or clusters (a stats matcher that drops listener_manager or cluster_manager; Istio keeps both by default)`,
        );
      }
      return served.waiting;
    },
    async drainListeners() {
      await learnServerInfo();
      for (const path of drain.calls) await expectOk(path);
    },
    profile() {
      const version = versionString === null ? null : parseEnvoyVersion(versionString);
      return {
        versionString,
        version: version ? formatVersion(version) : null,
        versionUnknown:
          version !== null
            ? null
            : versionString !== null
              ? { reason: 'unparseable', detail: `/server_info version ${JSON.stringify(versionString)} has no x.y.z`, failures: 0 }
              : infoFailures > 0
                ? {
                    reason: 'server-info-failing',
                    detail: `GET /server_info failed ${infoFailures} ${infoFailures === 1 ? 'time' : 'times'}, last: ${infoLastError}; next try at ${new Date(infoNextAttemptAt).toISOString()}`,
                    failures: infoFailures,
                  }
                : { reason: 'not-read-yet', detail: '/server_info is read once Envoy is LIVE', failures: 0 },
        drainCalls: drain.calls,
        drainCallsBasis: drain.basis,
        drainCallsWhy: drain.why,
        statsPath: countPath,
        drainStrategy,
        counting,
        lastCount,
      };
    },
  };
}

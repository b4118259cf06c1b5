/**
 * Envoy `/stats` text parsing and the counting rules: which statistics add up to "in flight".
 *
 * In flight = the requests of every HTTP connection manager (`http.<prefix>.downstream_rq_active`)
 * + the connections no HTTP connection manager holds (TCP proxy, TLS passthrough): the counted
 * listener connections (`counting.include`, default `listener.<address>.downstream_cx_active`, the
 * way Istio's agent counts) minus the connections of the HTTP connection managers whose requests
 * are counted. Requests, not connections, because no measured Envoy (1.36.4, 1.40.0) ever closes an
 * idle keep-alive connection on a drain: an LB that pools connections (HAProxy http-reuse,
 * NetScaler reuse, F5 OneConnect) would hold a connection count above 0 until the HCM idle_timeout
 * (1 h by default), while its requests reach 0 (docs/envoy.md). An idle connection left open is
 * told `Connection: close` (HTTP/1) or GOAWAY (HTTP/2) on its next response.
 *
 * An HTTP connection manager that does not expose `downstream_rq_active` (Istio's default stats
 * matcher keeps only `*downstream_cx_active`; `proxyStatsMatcher.inclusionSuffixes` adds it) is
 * counted by its connections, and the result says so.
 */
import { CONNECTIONS_ACTIVE, REQUESTS_ACTIVE, UPGRADES_ACTIVE } from '../contract/envoy-stat-names';
import { ALWAYS_EXCLUDED_STATS } from '../contract/hc-config';

export class StatsFormatError extends Error {}

export interface Stat {
  readonly name: string;
  readonly value: number;
}

// Envoy's text format: `name: value`; histograms print `name: P0(…) …` or `name: No recorded values`.
const LINE = /^([^\s:]+): (.*)$/;
const INTEGER = /^-?\d+$/;
const HISTOGRAM = /^(No recorded values|P0\(.*)$/;
// Text readouts print their value quoted (`cluster_manager.cds.version_text: "1"`, seen on 1.36 and 1.40).
const TEXT_READOUT = /^".*"$/;

/**
 * Parses `/stats` text. Histogram and text-readout lines are skipped; any other line that is not `name: integer` is
 * garbage (a half-broken admin must not read as "0 in flight"). So is a negative value: Envoy's
 * counters and gauges are unsigned 64-bit (envoyproxy/envoy envoy/stats/stats.h), so a minus sign is
 * not Envoy; summed, a -3 would cancel 3 requests in flight. (A counted value beyond 2^53 is refused
 * by count(): a gauge that wrapped below 0.)
 */
export function parseStatsText(text: string): Stat[] {
  const stats: Stat[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (line === '') continue;
    const match = LINE.exec(line);
    if (!match) throw new StatsFormatError(`not an Envoy stats line: ${JSON.stringify(line.slice(0, 80))}`);
    const value = match[2]!.trim();
    if (INTEGER.test(value)) {
      if (value.startsWith('-'))
        throw new StatsFormatError(`not a count (Envoy's stats are unsigned; this one is negative): ${JSON.stringify(line.slice(0, 80))}`);
      // Above 2^53 the number is approximate; it is only an error where it is counted (count()):
      // Envoy keeps hashes in some gauges (cluster_manager.cds.version on 1.36 and 1.40).
      stats.push({ name: match[1]!, value: Number(value) });
    } else if (!HISTOGRAM.test(value) && !TEXT_READOUT.test(value)) throw new StatsFormatError(`not a stat value: ${JSON.stringify(line.slice(0, 80))}`);
  }
  return stats;
}

/** Lines parsed between two turns of the event loop: about a millisecond of work on this machine. */
export const LINES_PER_SLICE = 2_000;

/**
 * parseStatsText in slices of LINES_PER_SLICE lines, yielding to the event loop between them, so a
 * large answer never holds up a probe: the probes are answered on the same loop, and a 4 MB body
 * parsed in one go held them for tens of milliseconds.
 */
export async function parseStatsTextInSlices(text: string): Promise<Stat[]> {
  const stats: Stat[] = [];
  for (let from = 0; from < text.length; ) {
    let to = from;
    for (let lines = 0; lines < LINES_PER_SLICE && to < text.length; lines++) {
      const nl = text.indexOf('\n', to);
      to = nl === -1 ? text.length : nl + 1;
    }
    stats.push(...parseStatsText(text.slice(from, to)));
    from = to;
    if (from < text.length) await new Promise((resolve) => setImmediate(resolve));
  }
  return stats;
}

export interface CountingRules {
  /** Connection-level stats summed (listeners by default). */
  readonly include: readonly string[];
  readonly exclude: readonly string[];
}

/** How each HTTP connection manager was counted. */
export type HcmCounting = 'requests' | 'connections';

export interface Count {
  readonly total: number;
  /** Requests of the HTTP connection managers that expose them. */
  readonly requests: number;
  /** Counted connections no request-counted HTTP connection manager holds. */
  readonly otherConnections: number;
  /** The stats that contributed, either sign. */
  readonly counted: Stat[];
  /** Per HTTP connection manager prefix (excluded ones left out). */
  readonly hcms: Readonly<Record<string, HcmCounting>>;
  /**
   * Upgraded (WebSocket) connections of the HTTP connection managers, already among `requests`
   * (each WebSocket is one active request: docs/long-lived.md); null when no HCM exposes the gauge.
   */
  readonly upgrades: number | null;
}

export interface Counter {
  /** The `filter` regex for `/stats?filter=…`, so Envoy sends only candidate lines. */
  readonly filter: string;
  count(stats: readonly Stat[]): Count;
  /** Whether a connection-level statistic is summed. */
  counts(name: string): boolean;
}

/** The two per-HTTP-connection-manager gauges the count is built from. */
export const HCM_ACTIVE = new RegExp(`^http\\.(.+)\\.(${CONNECTIONS_ACTIVE}|${REQUESTS_ACTIVE})$`);
/** The gauges of HCM_ACTIVE and HCM_UPGRADES, as one `/stats?filter=` (RE2) pattern. */
const HCM_ACTIVE_FILTER = '^http\\..+\\.downstream_(cx|rq|cx_upgrades)_active$';
/** WebSockets (and any HTTP upgrade) an HTTP connection manager holds open. */
export const HCM_UPGRADES = new RegExp(`^http\\.(.+)\\.${UPGRADES_ACTIVE}$`);

export class CountingRulesError extends Error {}

export function compileCounting(rules: CountingRules): Counter {
  const include = rules.include.map((p) => new RegExp(p));
  const exclude = [...ALWAYS_EXCLUDED_STATS, ...rules.exclude].map((p) => new RegExp(p));
  const excluded = (name: string) => exclude.some((r) => r.test(name));
  const counts = (name: string) => include.some((r) => r.test(name)) && !excluded(name);
  return {
    filter: [...rules.include, HCM_ACTIVE_FILTER].map((p) => `(?:${p})`).join('|'),
    counts,
    count(stats) {
      const counted: Stat[] = [];
      let connections = 0;
      let connectionLines = 0;
      const hcm = new Map<string, { cx?: Stat; rq?: Stat }>();
      let upgrades: number | null = null;
      for (const s of stats) {
        if (HCM_UPGRADES.test(s.name) && !excluded(s.name) && Number.isSafeInteger(s.value)) upgrades = (upgrades ?? 0) + s.value;
        if (counts(s.name)) {
          counted.push(s);
          connections += s.value;
          connectionLines++;
        }
        const m = HCM_ACTIVE.exec(s.name);
        if (m && !excluded(s.name)) {
          const entry = hcm.get(m[1]!) ?? {};
          entry[m[2] === REQUESTS_ACTIVE ? 'rq' : 'cx'] = s;
          hcm.set(m[1]!, entry);
        }
      }
      // Every Envoy has the listener gauges the rules target, 0 or not: none at all (an empty
      // answer, another program on the admin port, rules that match nothing) means "cannot count",
      // never 0 in flight.
      if (connectionLines === 0)
        throw new StatsFormatError(`no statistic matches the counting rules (${rules.include.join(', ')}): cannot count what is in flight`);
      const wrapped = [...counted, ...[...hcm.values()].flatMap((e) => [e.cx, e.rq])].find((s) => s !== undefined && !Number.isSafeInteger(s.value));
      if (wrapped) throw new StatsFormatError(`${wrapped.name} is ${wrapped.value}: a gauge wrapped below 0, not a count`);
      let requests = 0;
      let requestCountedConnections = 0;
      const hcms: Record<string, HcmCounting> = {};
      for (const [prefix, { cx, rq }] of [...hcm].sort(([a], [b]) => a.localeCompare(b))) {
        if (rq === undefined) {
          hcms[prefix] = 'connections';
          continue;
        }
        hcms[prefix] = 'requests';
        requests += rq.value;
        counted.push(rq);
        // Its connections are among the counted listeners' (or the included stats): take them out.
        if (cx !== undefined) {
          requestCountedConnections += cx.value;
          counted.push({ name: cx.name, value: -cx.value });
        }
      }
      const otherConnections = connections - requestCountedConnections;
      if (otherConnections < 0) {
        throw new CountingRulesError(
          `HTTP connection managers hold ${requestCountedConnections} connections but the counted listeners only ${connections}: the counting rules exclude a listener whose connection manager they count (exclude its http.<prefix>. too)`,
        );
      }
      return { total: requests + otherConnections, requests, otherConnections, counted, hcms, upgrades };
    },
  };
}

/** 'requests' when every counted HTTP connection manager exposes its requests, else what is mixed in. */
export function countingBasis(count: Pick<Count, 'hcms'>): 'requests' | 'connections' | 'mixed' {
  const kinds = new Set(Object.values(count.hcms));
  if (kinds.size === 0 || (kinds.size === 1 && kinds.has('connections'))) return 'connections';
  return kinds.size === 1 ? 'requests' : 'mixed';
}

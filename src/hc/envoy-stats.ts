/**
 * Envoy `/stats` text parsing and the counting rules: which statistics add up to "in flight".
 *
 * The default counts `listener.<address>.downstream_cx_active`: every connection a listener holds,
 * HTTP or TCP/TLS passthrough alike (HTTP connection-manager stats never see passthrough), the way
 * Istio's own agent does (istio/istio pkg/envoy/agent.go). Idle keep-alive connections count too,
 * which is right: after `drain_listeners?graceful` Envoy answers the next request on a connection
 * with `Connection: close` and closes idle HTTP/1 connections once its connection manager's
 * drain_timeout has passed, so they leave by themselves (the planner's drain timeout never falls
 * below that drain_timeout for this reason). While one is open, the LB could still reuse it.
 */
import { ALWAYS_EXCLUDED_STATS } from './config';

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
      if (value.startsWith('-')) throw new StatsFormatError(`not a count (Envoy's stats are unsigned; this one is negative): ${JSON.stringify(line.slice(0, 80))}`);
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
  readonly include: readonly string[];
  readonly exclude: readonly string[];
}

export interface Counter {
  /** The `filter` regex for `/stats?filter=…`, so Envoy sends only candidate lines. */
  readonly filter: string;
  /** Sums the stats the rules select, listing which ones contributed. */
  count(stats: readonly Stat[]): { total: number; counted: Stat[] };
  /** Whether one statistic name is counted. */
  counts(name: string): boolean;
}

export function compileCounting(rules: CountingRules): Counter {
  const include = rules.include.map((p) => new RegExp(p));
  const exclude = [...ALWAYS_EXCLUDED_STATS, ...rules.exclude].map((p) => new RegExp(p));
  const counts = (name: string) => include.some((r) => r.test(name)) && !exclude.some((r) => r.test(name));
  return {
    filter: rules.include.length === 1 ? rules.include[0]! : rules.include.map((p) => `(?:${p})`).join('|'),
    counts,
    count(stats) {
      const counted = stats.filter((s) => counts(s.name));
      // Every Envoy has the listener gauges the rules target, 0 or not: none at all (an empty
      // answer, another program on the admin port, rules that match nothing) means "cannot count",
      // never 0 in flight.
      if (counted.length === 0) throw new StatsFormatError(`no statistic matches the counting rules (${rules.include.join(', ')}): cannot count what is in flight`);
      const wrapped = counted.find((s) => !Number.isSafeInteger(s.value));
      if (wrapped) throw new StatsFormatError(`${wrapped.name} is ${wrapped.value}: a gauge wrapped below 0, not a count`);
      return { total: counted.reduce((sum, s) => sum + s.value, 0), counted };
    },
  };
}

/**
 * GET /metrics: the sidecar's state, the six events and the drain in Prometheus text format 0.0.4
 * (written by hand: the format is a few lines, docs/observability.md lists every family).
 *
 * Conventions (prometheus.io/docs/practices/naming): base units in names (`_seconds`), `_total`
 * for counters, `_timestamp_seconds` for Unix times, `_info` with value 1 for labels that describe
 * the process. What a termination leaves behind (the drain duration, a drain timeout) is derived
 * from the persisted state, not from process counters, so a sidecar restarted mid-sequence reports
 * the same values and Prometheus sees no reset.
 */
import type { HcMachine } from './machine';
import { STATE_FACTS, STATES, TERMINATION_EVENTS, type LastCount, type TerminationEvent } from '../contract/hc';

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * Buckets of the drain duration ([3] to [4]), seconds: from a drain that finds nothing in flight
 * (a poll interval, 0.05-1 s) to drain timeouts of minutes (1.2 x a long-request p99).
 */
export const DRAIN_DURATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600] as const;

/** What the sidecar knows beyond the machine: who it is, and whether it was told to stop. */
export interface MetricsContext {
  /** gracegate's package version. */
  readonly version: string;
  /** Envoy's `x.y.z` from /server_info; null while unknown. */
  envoyVersion(): string | null;
  /** When SIGTERM arrived (epoch ms); null while running. */
  terminatingSince(): number | null;
  /** The last count's parts (long-lived apart); null before the first count. @default none */
  lastCount?(): LastCount | null;
}

type Labels = Readonly<Record<string, string>>;
type Sample = readonly [labels: Labels, value: number, suffix?: string];

function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

function family(out: string[], name: string, type: 'gauge' | 'counter' | 'histogram', help: string, samples: readonly Sample[]): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  for (const [labels, value, suffix] of samples) out.push(`${name}${suffix ?? ''}${labelText(labels)} ${value}`);
}

/** A histogram holding at most one observation: a sidecar drains once in its pod's life. */
function drainHistogram(seconds: number | null): Sample[] {
  const observed = seconds === null ? 0 : 1;
  const buckets: Sample[] = DRAIN_DURATION_BUCKETS.map((le) => [{ le: String(le) }, seconds !== null && seconds <= le ? 1 : 0, '_bucket']);
  return [...buckets, [{ le: '+Inf' }, observed, '_bucket'], [{}, seconds ?? 0, '_sum'], [{}, observed, '_count']];
}

export function renderMetrics(machine: HcMachine, context: MetricsContext): string {
  const p = machine.context;
  const c = machine.counters;
  const out: string[] = [];
  const event = (e: TerminationEvent) => ({ event: String(e.id), name: e.name });

  family(out, 'gracegate_hc_info', 'gauge', 'Always 1: the sidecar version, the planned sequence and the Envoy version (/server_info).', [
    [{ version: context.version, sequence: machine.sequence, envoy_version: context.envoyVersion() ?? 'unknown' }, 1],
  ]);
  family(
    out,
    'gracegate_hc_state',
    'gauge',
    '1 for the state the sidecar is in, 0 for the others.',
    STATES.map((s) => [{ state: s }, s === p.state ? 1 : 0]),
  );
  family(out, 'gracegate_hc_state_entered_timestamp_seconds', 'gauge', 'When the current state was entered.', [[{}, p.enteredAt / 1000]]);
  family(
    out,
    'gracegate_hc_in_sequence',
    'gauge',
    '1 from the start of a termination sequence until CLOSED (a pod that vanishes while 1 was killed before CLOSED).',
    [[{}, p.sequenceStartedAt !== null && !STATE_FACTS[p.state].finished ? 1 : 0]],
  );
  const terminating = context.terminatingSince();
  family(out, 'gracegate_hc_terminating', 'gauge', '1 once the sidecar got SIGTERM (it waits for one more scrape, bounded, before it exits).', [
    [{}, terminating === null ? 0 : 1],
  ]);
  if (machine.inFlight !== null) {
    family(out, 'gracegate_hc_in_flight', 'gauge', 'In-flight work as counted by the counting rules at the last poll.', [[{}, machine.inFlight]]);
  }
  const last = context.lastCount?.() ?? null;
  if (last !== null) {
    // Long-lived connections apart from requests, where Envoy's stats tell them apart (docs/long-lived.md).
    family(
      out,
      'gracegate_hc_long_lived_connections',
      'gauge',
      'Of the last count: WebSocket (upgraded) connections (among the requests; absent when Envoy keeps no downstream_cx_upgrades_active) and connections no HTTP connection manager holds (TCP proxy, TLS passthrough).',
      [...(last.upgrades === null ? [] : [[{ kind: 'websocket' }, last.upgrades] as const]), [{ kind: 'tcp' }, last.otherConnections]],
    );
  }
  const marks: Sample[] = [];
  const counts: Sample[] = [];
  for (const e of TERMINATION_EVENTS) {
    const mark = p.events[e.key];
    if (mark) marks.push([{ ...event(e), estimated: String(mark.estimated) }, mark.at / 1000]);
    const n = machine.eventInFlight.countAt(e.key);
    if (n !== null) counts.push([event(e), n]);
  }
  family(out, 'gracegate_hc_event_timestamp_seconds', 'gauge', 'When each of the six termination events happened ([5] and [6] are estimates).', marks);
  family(out, 'gracegate_hc_event_in_flight', 'gauge', 'In-flight when each event happened ([5], [6]: read at their expected time).', counts);
  const started = p.events.proxyDrainStarts;
  const ended = p.events.inFlightZero;
  const drainSeconds = started && ended ? Math.max(0, ended.at - started.at) / 1000 : null;
  family(
    out,
    'gracegate_hc_drain_duration_seconds',
    'histogram',
    'From the proxy drain [3] to in-flight 0 or the drain timeout [4].',
    drainHistogram(drainSeconds),
  );
  family(out, 'gracegate_hc_drain_timeouts_total', 'counter', 'Drains that reached the drain timeout before in-flight 0 (this pod: 0 or 1).', [
    [{}, p.drainTimedOut ? 1 : 0],
  ]);
  family(out, 'gracegate_hc_fault_entries_total', 'counter', 'Entries into FAULT since the process started (not the start-up wait for Envoy).', [
    [{}, c.faultEntries],
  ]);
  family(out, 'gracegate_hc_wait_closed_waiters', 'gauge', 'GET /wait-closed requests waiting.', [[{}, machine.waiterCount]]);
  family(out, 'gracegate_hc_envoy_poll_errors_total', 'counter', 'Failed polls of the Envoy admin (unreachable, timeout, garbage, not LIVE).', [
    [{}, c.pollErrors],
  ]);
  family(out, 'gracegate_hc_envoy_drain_call_errors_total', 'counter', 'Failed drain_listeners calls (retried).', [[{}, c.drainCallErrors]]);
  family(out, 'gracegate_hc_refused_events_total', 'counter', 'Control requests refused by the transition table (409).', [[{}, c.refusedEvents]]);
  family(out, 'gracegate_hc_state_file_errors_total', 'counter', 'Failed writes of the state file.', [[{}, c.stateFileErrors]]);
  family(
    out,
    'gracegate_hc_state_file_untrusted_total',
    'counter',
    'Starts on a state file that could not be trusted (unreadable, invalid, dated ahead): FAULT until Envoy said whether the drain was sent.',
    [[{}, c.untrustedStateFiles]],
  );
  family(out, 'gracegate_hc_transitions_total', 'counter', 'State changes since the process started.', [[{}, c.transitions]]);
  family(
    out,
    'gracegate_hc_wait_closed_displaced_total',
    'counter',
    '/wait-closed waiters answered 503 to make room for a newer one (more than 32 waiting, or 4 from one address).',
    [[{}, c.displacedWaiters]],
  );
  family(
    out,
    'gracegate_hc_witness_refused_total',
    'counter',
    'Witness-port requests (/wait-closed, /hc-stopping) from an address no kubelet hook comes from, answered 403.',
    [[{}, c.refusedWitnessCallers]],
  );
  return `${out.join('\n')}\n`;
}

/** GET /metrics: the machine's state, counts and event times in Prometheus text format 0.0.4. */
import type { HcMachine } from './machine';
import { STATES, TERMINATION_EVENTS } from '../hc-contract';

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type Sample = [labels: string, value: number];

function family(out: string[], name: string, type: 'gauge' | 'counter', help: string, samples: Sample[]): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  for (const [labels, value] of samples) out.push(`${name}${labels} ${value}`);
}

export function renderMetrics(machine: HcMachine): string {
  const ctx = machine.context;
  const c = machine.counters;
  const out: string[] = [];
  family(out, 'gracegate_hc_state', 'gauge', '1 for the state the sidecar is in, 0 for the others.', STATES.map((s) => [`{state="${s}"}`, s === ctx.state ? 1 : 0]));
  family(out, 'gracegate_hc_state_entered_timestamp_seconds', 'gauge', 'When the current state was entered.', [['', ctx.enteredAt / 1000]]);
  if (machine.inFlight !== null) {
    family(out, 'gracegate_hc_in_flight', 'gauge', 'In-flight work as counted by the counting rules at the last poll.', [['', machine.inFlight]]);
  }
  const marks: Sample[] = [];
  for (const { id, key, name } of TERMINATION_EVENTS) {
    const mark = ctx.events[key];
    if (mark) marks.push([`{event="${id}",name="${name}",estimated="${mark.estimated}"}`, mark.at / 1000]);
  }
  family(out, 'gracegate_hc_event_timestamp_seconds', 'gauge', 'When each of the six termination events happened ([5] and [6] are estimates).', marks);
  const started = ctx.events.proxyDrainStarts;
  const zero = ctx.events.inFlightZero;
  if (started && zero) {
    family(out, 'gracegate_hc_drain_duration_seconds', 'gauge', 'From the proxy drain [3] to in-flight 0 or the drain timeout [4].', [['', (zero.at - started.at) / 1000]]);
  }
  family(out, 'gracegate_hc_wait_closed_waiters', 'gauge', 'GET /wait-closed requests waiting.', [['', machine.waiterCount]]);
  family(out, 'gracegate_hc_envoy_poll_errors_total', 'counter', 'Failed polls of the Envoy admin (unreachable, timeout, garbage, not LIVE).', [['', c.pollErrors]]);
  family(out, 'gracegate_hc_envoy_drain_call_errors_total', 'counter', 'Failed drain_listeners calls (retried).', [['', c.drainCallErrors]]);
  family(out, 'gracegate_hc_drain_timeouts_total', 'counter', 'Drains that reached the drain timeout before in-flight 0.', [['', c.drainTimeouts]]);
  family(out, 'gracegate_hc_refused_events_total', 'counter', 'Control requests refused by the transition table (409).', [['', c.refusedEvents]]);
  family(out, 'gracegate_hc_state_file_errors_total', 'counter', 'Failed writes of the state file.', [['', c.stateFileErrors]]);
  family(out, 'gracegate_hc_transitions_total', 'counter', 'State changes since the process started.', [['', c.transitions]]);
  family(out, 'gracegate_hc_wait_closed_displaced_total', 'counter', '/wait-closed waiters answered 503 to make room for a newer one (more than 32 waiting, or 4 from one address).', [['', c.displacedWaiters]]);
  return `${out.join('\n')}\n`;
}

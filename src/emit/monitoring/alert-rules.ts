/**
 * The alerts of one gateway, as Prometheus rule groups (plain data). Each alert has a runbook in
 * docs/alerts.md (its anchor is the alert's name in lower case); docs/observability.md says why
 * each expression reads what it reads.
 *
 * A gateway pod vanishes seconds after its termination, so an alert that looked at the current
 * sample would see the pod's last moments only by luck: every alert reads a window
 * (`max_over_time`, `increase`) that still holds a dead pod's last scrape, and fires for that long.
 */
import { statesWhere, type StateFacts } from '../../contract/hc';
import type { Plan } from '../../plan/plan-gateway';
import { ENVOY_SERIES, monitoringTargets } from './targets';

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

export interface RuleGroup {
  readonly name: string;
  readonly rules: readonly AlertRule[];
}

/** How long an event stays alerting after it happened (a dead pod's last samples stay this long in range). */
export const EVENT_WINDOW = '15m';
/** The termination window the loss alert compares with the hour before it. */
export const LOSS_WINDOW = '10m';
/** A FAULT lasting this long alerts even without an entry (start-up never takes it: Envoy is ready in seconds). */
export const STUCK_FAULT_SECONDS = 300;
/** The hour before, in LOSS_WINDOWs (the baseline is its average per window). */
const BASELINE = { range: '1h', windows: 6 } as const;

export const ALERT_NAMES = ['GracegateDrainTimeout', 'GracegateFault', 'GracegateKilledBeforeClosed', 'GracegateTerminationLoss'] as const;
export type AlertName = (typeof ALERT_NAMES)[number];

export function runbookRef(alert: AlertName): string {
  return `docs/alerts.md#${alert.toLowerCase()}`;
}

const oneLine = (lines: string[]) => lines.join('\n');

/** The states whose row says `fact` (STATE_FACTS), as a `state` label matcher and as words. */
function statesOf(fact: (f: StateFacts) => boolean): { matcher: string; words: string } {
  const states = statesWhere(fact);
  if (states.length === 0) throw new Error('no sidecar state has the fact an alert reads');
  return {
    matcher: states.length === 1 ? `state="${states[0]}"` : `state=~"${states.join('|')}"`,
    words: states.join(' or '),
  };
}

export function alertRuleGroups(plan: Plan): RuleGroup[] {
  const t = monitoringTargets(plan);
  const j = t.matcher;
  const byPod = 'namespace, pod';
  const labels = (severity: string) => ({ severity, gateway: t.gateway, gateway_namespace: t.namespace });
  const [rq, resets] = ENVOY_SERIES;
  const fault = statesOf((f) => f.fault);
  const finished = statesOf((f) => f.finished);

  const drainTimeout: AlertRule = {
    alert: 'GracegateDrainTimeout',
    expr: `max by (${byPod}) (max_over_time(gracegate_hc_drain_timeouts_total{${j}}[${EVENT_WINDOW}])) > 0`,
    labels: labels('warning'),
    annotations: {
      summary: `A drain of gateway ${t.namespace}/${t.gateway} hit its drain timeout`,
      description:
        'Pod {{ $labels.pod }} stopped waiting for in-flight 0 at the drain timeout (plan: drainTimeoutSeconds) and went on with requests still running; gracegate_hc_event_in_flight{event="4"} says how many.',
      runbook: runbookRef('GracegateDrainTimeout'),
    },
  };

  const faultRule: AlertRule = {
    alert: 'GracegateFault',
    // Entries counted by the sidecar, or a FAULT that has lasted (a pod whose Envoy never became
    // ready has been in FAULT since start-up, which is not counted as an entry), by the sidecar's
    // own clock.
    expr: oneLine([
      `max by (${byPod}) (increase(gracegate_hc_fault_entries_total{${j}}[${EVENT_WINDOW}])) > 0`,
      `or max by (${byPod}) ((time() - gracegate_hc_state_entered_timestamp_seconds{${j}}) > ${STUCK_FAULT_SECONDS}`,
      `  and on (${byPod}) gracegate_hc_state{${j},${fault.matcher}} == 1)`,
    ]),
    labels: labels('critical'),
    annotations: {
      summary: `A gracegate sidecar of gateway ${t.namespace}/${t.gateway} is or was in ${fault.words}`,
      description:
        "Pod {{ $labels.pod }}: the sidecar could not read Envoy's admin (down, slow, garbage or not LIVE), so the LB and readiness answer 503 there; /state on the control port has the reason.",
      runbook: runbookRef('GracegateFault'),
    },
  };

  const killed: AlertRule = {
    alert: 'GracegateKilledBeforeClosed',
    // In a sequence within the window, never CLOSED, and no longer scraped: the process ended
    // before CLOSED (SIGKILL at the grace period, an OOM kill, or SIGTERM once the drain preStop
    // gave up). `for` lets a sidecar restart (a few failed scrapes) come back first.
    expr: oneLine([
      `max by (${byPod}) (max_over_time(gracegate_hc_in_sequence{${j}}[${EVENT_WINDOW}])) == 1`,
      `unless on (${byPod}) max by (${byPod}) (max_over_time(gracegate_hc_state{${j},${finished.matcher}}[${EVENT_WINDOW}])) == 1`,
      `unless on (${byPod}) max by (${byPod}) (gracegate_hc_in_sequence{${j}})`,
    ]),
    for: '1m',
    labels: labels('critical'),
    annotations: {
      summary: `A gateway pod of ${t.namespace}/${t.gateway} ended before its sequence reached ${finished.words}`,
      description: `Pod {{ $labels.pod }} was in a termination sequence and stopped being scraped without ever reporting ${finished.words}: it was killed mid-sequence, and whatever was in flight then was cut.`,
      runbook: runbookRef('GracegateKilledBeforeClosed'),
    },
  };

  const errors = (range: string, offset = '') =>
    oneLine([
      `sum by (namespace) (increase(${rq}{${j},response_code_class="5xx"}[${range}]${offset}))`,
      `  + sum by (namespace) (increase(${resets}{${j}}[${range}]${offset}))`,
    ]);
  const sequenceLoss = oneLine([
    '(',
    errors(LOSS_WINDOW),
    `) - (`,
    `  (${errors(BASELINE.range, ` offset ${LOSS_WINDOW}`)}) / ${BASELINE.windows}`,
    `  or 0 * (${errors(LOSS_WINDOW)})`,
    ') > 0',
    `and on (namespace) max by (namespace) (max_over_time(gracegate_hc_in_sequence{${j}}[${LOSS_WINDOW}])) == 1`,
  ]);
  const loss: AlertRule = {
    alert: 'GracegateTerminationLoss',
    expr: sequenceLoss,
    labels: labels('critical'),
    annotations: {
      summary: `Gateway ${t.namespace}/${t.gateway} lost requests during a termination`,
      description:
        'While a gateway pod was terminating, its 5xx responses plus the connections its clients closed with a request still active (envoy downstream_cx_destroy_remote_active_rq: an LB flush, a client timeout) rose above the hour before.',
      runbook: runbookRef('GracegateTerminationLoss'),
    },
  };

  return [{ name: `gracegate.${t.namespace}.${t.gateway}`, rules: [drainTimeout, faultRule, killed, loss] }];
}

/**
 * `grafana-dashboard.json`: one gateway's terminations at a glance. Typed with the dashboard types
 * Grafana generates from its own schema (`@grafana/schema`, a development dependency: types only,
 * nothing of it runs), and the tests check the written file against them too.
 *
 * Every query selects the gateway's job (targets.ts). Per-pod values that a pod leaves once, at
 * its termination, are read with `max_over_time` / `last_over_time` over the dashboard's range:
 * the pod is gone by the time anyone looks.
 */
import type { Dashboard, Panel } from '@grafana/schema';
import { STATES } from '../../contract/hc';
import type { Plan } from '../../plan/plan-gateway';
import { ENVOY_SERIES, monitoringTargets } from './targets';

/** Grafana 10.4's dashboard schema version; newer Grafanas migrate it on import. */
export const DASHBOARD_SCHEMA_VERSION = 39;

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' } as const;

interface PanelSpec {
  readonly title: string;
  readonly type: 'timeseries' | 'stat' | 'table' | 'state-timeline';
  readonly description: string;
  readonly queries: readonly { readonly expr: string; readonly legend?: string; readonly instant?: boolean }[];
  readonly unit?: string;
  readonly w: number;
  readonly h: number;
}

function panels(plan: Plan): PanelSpec[] {
  const j = monitoringTargets(plan).matcher;
  const [rq, resets] = ENVOY_SERIES;
  return [
    {
      title: 'Pods in a termination sequence',
      type: 'stat',
      description: 'Sidecars between the start of a sequence and CLOSED (gracegate_hc_in_sequence).',
      queries: [{ expr: `sum(gracegate_hc_in_sequence{${j}})`, instant: true }],
      w: 6,
      h: 4,
    },
    {
      title: 'Drains in range',
      type: 'stat',
      description: 'Terminations that reached [4] (in-flight 0 or the drain timeout), each pod once.',
      queries: [{ expr: `sum(max_over_time(gracegate_hc_drain_duration_seconds_count{${j}}[$__range]))`, instant: true }],
      w: 6,
      h: 4,
    },
    {
      title: 'Drain timeouts in range',
      type: 'stat',
      description: 'Drains that stopped waiting at the drain timeout with requests still in flight (alert GracegateDrainTimeout).',
      queries: [{ expr: `sum(max_over_time(gracegate_hc_drain_timeouts_total{${j}}[$__range]))`, instant: true }],
      w: 6,
      h: 4,
    },
    {
      title: 'FAULT entries in range',
      type: 'stat',
      description: "Entries into FAULT: the sidecar could not read Envoy's admin (alert GracegateFault).",
      queries: [{ expr: `sum(increase(gracegate_hc_fault_entries_total{${j}}[$__range]))`, instant: true }],
      w: 6,
      h: 4,
    },
    {
      title: 'Sidecar state per pod',
      type: 'state-timeline',
      description: `${STATES.slice(0, -1).join(', ')} or ${STATES.at(-1)} over time, per pod.`,
      queries: [{ expr: `max by (pod, state) (gracegate_hc_state{${j}}) == 1`, legend: '{{pod}} {{state}}' }],
      w: 24,
      h: 8,
    },
    {
      title: 'Drain duration ([3] to [4])',
      type: 'timeseries',
      description: 'Quantiles over the pods that drained within the range; each pod drains once.',
      queries: [0.5, 0.99].map((q) => ({
        expr: `histogram_quantile(${q}, sum by (le) (max_over_time(gracegate_hc_drain_duration_seconds_bucket{${j}}[$__range])))`,
        legend: `p${q * 100}`,
      })),
      unit: 's',
      w: 12,
      h: 8,
    },
    {
      title: 'In-flight now',
      type: 'timeseries',
      description: 'What the sidecar counted at its last poll of Envoy (polled while draining).',
      queries: [{ expr: `max by (pod) (gracegate_hc_in_flight{${j}})`, legend: '{{pod}}' }],
      w: 12,
      h: 8,
    },
    {
      title: 'In-flight at each event, last termination per pod',
      type: 'table',
      description:
        'In-flight at [1] LB fails, [2] readiness fails, [3] drain, [4] zero or timeout, [5] LB DOWN (expected), [6] LB resets (expected). Above 0 at [6] behind an LB that resets sessions: those requests were cut.',
      queries: [{ expr: `max by (pod, event, name) (last_over_time(gracegate_hc_event_in_flight{${j}}[$__range]))`, instant: true }],
      w: 12,
      h: 8,
    },
    {
      title: 'Gateway 5xx and client-closed active requests',
      type: 'timeseries',
      description: 'Both, not 5xx alone: a request cut by an LB flush is a reset, never a 5xx (alert GracegateTerminationLoss).',
      queries: [
        { expr: `sum(rate(${rq}{${j},response_code_class="5xx"}[$__rate_interval]))`, legend: '5xx/s' },
        { expr: `sum(rate(${resets}{${j}}[$__rate_interval]))`, legend: 'closed with a request active/s' },
      ],
      unit: 'reqps',
      w: 12,
      h: 8,
    },
    {
      title: 'Versions',
      type: 'table',
      description: 'gracegate, the sequence and the Envoy version per pod (gracegate_hc_info).',
      queries: [{ expr: `max by (pod, version, sequence, envoy_version) (gracegate_hc_info{${j}})`, instant: true }],
      w: 24,
      h: 6,
    },
  ];
}

function panel(spec: PanelSpec, id: number, x: number, y: number): Panel {
  return {
    id,
    type: spec.type,
    title: spec.title,
    description: spec.description,
    datasource: { ...DATASOURCE },
    gridPos: { x, y, w: spec.w, h: spec.h },
    fieldConfig: { defaults: spec.unit ? { unit: spec.unit } : {}, overrides: [] },
    options: {},
    targets: spec.queries.map((q, i) => ({
      refId: String.fromCharCode(65 + i),
      datasource: { ...DATASOURCE },
      expr: q.expr,
      ...(q.legend ? { legendFormat: q.legend } : {}),
      ...(q.instant ? { instant: true, range: false } : {}),
    })),
  };
}

/** The dashboard as an object, typed by Grafana's own dashboard schema. */
export function grafanaDashboard(plan: Plan): Dashboard {
  const t = monitoringTargets(plan);
  let x = 0;
  let y = 0;
  let rowHeight = 0;
  const laidOut = panels(plan).map((spec, i) => {
    if (x + spec.w > 24) {
      x = 0;
      y += rowHeight;
      rowHeight = 0;
    }
    const p = panel(spec, i + 1, x, y);
    x += spec.w;
    rowHeight = Math.max(rowHeight, spec.h);
    return p;
  });
  return {
    uid: `gracegate-${t.namespace}-${t.gateway}`.slice(0, 40),
    title: `gracegate: ${t.namespace}/${t.gateway} terminations`,
    description: 'Generated by gracegate synth. Alerts and runbooks: docs/alerts.md; metrics: docs/observability.md.',
    tags: ['gracegate', 'istio', 'gateway'],
    editable: true,
    schemaVersion: DASHBOARD_SCHEMA_VERSION,
    time: { from: 'now-6h', to: 'now' },
    refresh: '30s',
    templating: {
      list: [{ name: 'datasource', type: 'datasource', label: 'Prometheus', query: 'prometheus' }],
    },
    panels: laidOut,
  };
}

export function grafanaDashboardJson(plan: Plan): string {
  return `${JSON.stringify(grafanaDashboard(plan), null, 2)}\n`;
}

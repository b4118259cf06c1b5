/**
 * The alerts synth writes, checked by the real promtool (Debian's prometheus package):
 * `promtool check rules` on both forms (the PrometheusRule's groups and the rule file), and
 * `promtool test rules` with series for each alert firing and not firing.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { alertRuleGroups, ALERT_NAMES, type AlertRule } from '../../../src/emit/monitoring/alert-rules';
import { prometheusRuleYaml, ruleFileYaml } from '../../../src/emit/monitoring/prometheus-files';
import { planGateway } from '../../../src/plan/plan-gateway';
import { resolved } from '../../support/spec-builder';
import { testDir } from '../../support/tmp';

const plan = planGateway(resolved());
const JOB = 'istio-ingress/igw-gracegate';
const dir = testDir('gracegate-rules-');
const rulesPath = path.join(dir, 'rules.yaml');
fs.writeFileSync(rulesPath, ruleFileYaml(plan));
const rules = new Map<string, AlertRule>(
  alertRuleGroups(plan)
    .flatMap((g) => g.rules)
    .map((r) => [r.alert, r]),
);

/** The labels and annotations promtool expects of a firing alert, templated for one pod. */
function expected(alert: string, extra: Record<string, string>) {
  const rule = rules.get(alert)!;
  const annotations = Object.fromEntries(Object.entries(rule.annotations).map(([k, v]) => [k, v.replace(/\{\{ \$labels\.pod \}\}/g, extra['pod'] ?? '')]));
  return { exp_labels: { ...rule.labels, namespace: 'istio-ingress', ...extra }, exp_annotations: annotations };
}

const s = (name: string, labels: Record<string, string>, values: string) => ({
  series: `${name}{${Object.entries({ job: JOB, namespace: 'istio-ingress', ...labels })
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}}`,
  values,
});

/** Runs one promtool unit-test file; fails with promtool's own output. */
function promtoolTest(name: string, tests: unknown[]): void {
  const file = path.join(dir, `${name}.test.yaml`);
  fs.writeFileSync(file, stringify({ rule_files: [rulesPath], evaluation_interval: '15s', tests }));
  const r = spawnSync('promtool', ['test', 'rules', file], { encoding: 'utf8' });
  assert.equal(r.status, 0, `promtool test rules ${name}:\n${r.stdout}${r.stderr}`);
}

test('promtool check rules: the rule file and the PrometheusRule groups', () => {
  assert.match(execFileSync('promtool', ['check', 'rules', rulesPath], { encoding: 'utf8' }), new RegExp(`SUCCESS: ${ALERT_NAMES.length} rules found`));
  const crd = parse(prometheusRuleYaml(plan)) as { kind: string; spec: { groups: unknown } };
  assert.equal(crd.kind, 'PrometheusRule');
  const groups = path.join(dir, 'crd-groups.yaml');
  fs.writeFileSync(groups, stringify({ groups: crd.spec.groups }));
  assert.match(execFileSync('promtool', ['check', 'rules', groups], { encoding: 'utf8' }), /SUCCESS/);
});

// 15 s between samples (a..b = a first value, then +/-1 per step; 'stale' ends a series as a
// vanished pod does).
describe('promtool test rules', () => {
  test('GracegateDrainTimeout: fires for the pod whose drain timed out, also after it vanished; not for the others, not after the window', () => {
    promtoolTest('drain-timeout', [
      {
        interval: '15s',
        input_series: [
          s('gracegate_hc_drain_timeouts_total', { pod: 'igw-1' }, '0 0 0 1 1 stale'),
          s('gracegate_hc_drain_timeouts_total', { pod: 'igw-2' }, '0 0 0 0 0 stale'),
        ],
        alert_rule_test: [
          { eval_time: '30s', alertname: 'GracegateDrainTimeout', exp_alerts: [] },
          { eval_time: '1m', alertname: 'GracegateDrainTimeout', exp_alerts: [expected('GracegateDrainTimeout', { pod: 'igw-1' })] },
          { eval_time: '10m', alertname: 'GracegateDrainTimeout', exp_alerts: [expected('GracegateDrainTimeout', { pod: 'igw-1' })] },
          { eval_time: '20m', alertname: 'GracegateDrainTimeout', exp_alerts: [] },
        ],
      },
    ]);
  });

  test('GracegateFault: an entry fires; a FAULT that lasts 5 minutes fires; the start-up wait for Envoy does not', () => {
    promtoolTest('fault', [
      {
        interval: '15s',
        input_series: [
          // igw-1: OPEN, a FAULT entry at 45 s, OPEN again 15 s later.
          s('gracegate_hc_fault_entries_total', { pod: 'igw-1' }, '0 0 0 1 1 1 1 1'),
          s('gracegate_hc_state', { pod: 'igw-1', state: 'FAULT' }, '0 0 0 1 0 0 0 0'),
          s('gracegate_hc_state_entered_timestamp_seconds', { pod: 'igw-1' }, '0 0 0 45 60 60 60 60'),
          // igw-2: start-up, FAULT for 30 s until Envoy is ready, then OPEN: no entry, no alert.
          s('gracegate_hc_fault_entries_total', { pod: 'igw-2' }, '0x40'),
          s('gracegate_hc_state', { pod: 'igw-2', state: 'FAULT' }, '1 1 1 0x37'),
          s('gracegate_hc_state_entered_timestamp_seconds', { pod: 'igw-2' }, '0 0 0 45x37'),
          // igw-3: in FAULT since start-up (Envoy never ready): fires once that lasted 5 minutes.
          s('gracegate_hc_fault_entries_total', { pod: 'igw-3' }, '0x40'),
          s('gracegate_hc_state', { pod: 'igw-3', state: 'FAULT' }, '1x40'),
          s('gracegate_hc_state_entered_timestamp_seconds', { pod: 'igw-3' }, '0x40'),
        ],
        alert_rule_test: [
          { eval_time: '30s', alertname: 'GracegateFault', exp_alerts: [] },
          { eval_time: '1m', alertname: 'GracegateFault', exp_alerts: [expected('GracegateFault', { pod: 'igw-1' })] },
          { eval_time: '4m50s', alertname: 'GracegateFault', exp_alerts: [expected('GracegateFault', { pod: 'igw-1' })] },
          {
            eval_time: '6m',
            alertname: 'GracegateFault',
            exp_alerts: [expected('GracegateFault', { pod: 'igw-1' }), expected('GracegateFault', { pod: 'igw-3' })],
          },
        ],
      },
    ]);
  });

  test('GracegateKilledBeforeClosed: a pod gone mid-sequence fires; one that reached CLOSED, or a sidecar restart, does not', () => {
    promtoolTest('killed', [
      {
        interval: '15s',
        input_series: [
          // igw-1: in a sequence, then gone without CLOSED (SIGKILL).
          s('gracegate_hc_in_sequence', { pod: 'igw-1' }, '0 1 1 1 stale'),
          s('gracegate_hc_state', { pod: 'igw-1', state: 'CLOSED' }, '0 0 0 0 stale'),
          // igw-2: in a sequence, CLOSED scraped, then gone: the normal end.
          s('gracegate_hc_in_sequence', { pod: 'igw-2' }, '0 1 1 0 stale'),
          s('gracegate_hc_state', { pod: 'igw-2', state: 'CLOSED' }, '0 0 0 1 stale'),
          // igw-3: in a sequence; the sidecar restarts (two failed scrapes), then resumes.
          s('gracegate_hc_in_sequence', { pod: 'igw-3' }, '0 1 1 stale stale 1 1 1 1 1 1 1'),
          s('gracegate_hc_state', { pod: 'igw-3', state: 'CLOSED' }, '0 0 0 stale stale 0 0 0 0 0 0 0'),
        ],
        alert_rule_test: [
          { eval_time: '1m15s', alertname: 'GracegateKilledBeforeClosed', exp_alerts: [] },
          { eval_time: '2m30s', alertname: 'GracegateKilledBeforeClosed', exp_alerts: [expected('GracegateKilledBeforeClosed', { pod: 'igw-1' })] },
          { eval_time: '20m', alertname: 'GracegateKilledBeforeClosed', exp_alerts: [] },
        ],
      },
    ]);
  });

  const baseline = (pod: string) => [
    s('envoy_http_downstream_rq', { pod, response_code_class: '5xx', http_conn_manager_prefix: 'outbound_0.0.0.0_8080' }, '0+2x480'),
    s('envoy_http_downstream_cx_destroy_remote_active_rq', { pod, http_conn_manager_prefix: 'outbound_0.0.0.0_8080' }, '0x480'),
  ];
  test('GracegateTerminationLoss: client-closed active requests rising in a termination window fire; the usual 5xx rate and errors outside a window do not', () => {
    promtoolTest('loss', [
      {
        // Two hours of a steady 8 5xx/min; at 1h50m pod igw-1 starts a sequence and 30 connections
        // are closed with a request active within a minute (an LB flush).
        interval: '15s',
        input_series: [
          s('envoy_http_downstream_rq', { pod: 'igw-1', response_code_class: '5xx', http_conn_manager_prefix: 'outbound_0.0.0.0_8080' }, '0+2x480'),
          s('envoy_http_downstream_cx_destroy_remote_active_rq', { pod: 'igw-1', http_conn_manager_prefix: 'outbound_0.0.0.0_8080' }, '0x440 0+10x3 30x37'),
          s('gracegate_hc_in_sequence', { pod: 'igw-1' }, '0x439 1x41'),
        ],
        alert_rule_test: [
          { eval_time: '1h49m', alertname: 'GracegateTerminationLoss', exp_alerts: [] },
          {
            eval_time: '1h52m',
            alertname: 'GracegateTerminationLoss',
            exp_alerts: [expected('GracegateTerminationLoss', {})].map((e) => ({ ...e, exp_labels: { ...e.exp_labels, namespace: 'istio-ingress' } })),
          },
        ],
      },
      {
        // A termination window with the usual 5xx rate: no loss.
        interval: '15s',
        input_series: [...baseline('igw-1'), s('gracegate_hc_in_sequence', { pod: 'igw-1' }, '0x439 1x41')],
        alert_rule_test: [{ eval_time: '1h55m', alertname: 'GracegateTerminationLoss', exp_alerts: [] }],
      },
      {
        // Connections closed with a request active, but no pod terminating: not this alert's business.
        interval: '15s',
        input_series: [
          s('envoy_http_downstream_rq', { pod: 'igw-1', response_code_class: '5xx', http_conn_manager_prefix: 'outbound_0.0.0.0_8080' }, '0x480'),
          s('envoy_http_downstream_cx_destroy_remote_active_rq', { pod: 'igw-1', http_conn_manager_prefix: 'outbound_0.0.0.0_8080' }, '0x440 0+10x3 30x37'),
          s('gracegate_hc_in_sequence', { pod: 'igw-1' }, '0x480'),
        ],
        alert_rule_test: [{ eval_time: '1h52m', alertname: 'GracegateTerminationLoss', exp_alerts: [] }],
      },
    ]);
  });
});

/**
 * The README's and docs/facts.md's sequence tables, from the model: each LB behaviour of each vendor,
 * what it does on DOWN and with a refused connection (src/lb/<vendor>/behaviour.ts), each order's
 * expected loss per pod termination under one reference traffic, and the order the plan runs
 * (src/plan/order-choice.ts). `node dist/test/plan/sequences-main.js` writes docs/sequences.json and
 * the documents' generated blocks; test/plan/sequences-docs.test.ts fails when either is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SEQUENCES, type Sequence } from '../../src/contract/hc';
import { planGateway } from '../../src/plan/plan-gateway';
import { resolved } from '../support/spec-builder';
import { spliceBetween } from '../proof/harness/render';

/** The traffic every row is planned for. */
export const REFERENCE_TRAFFIC = { longRequestP99Seconds: 2, requestsPerSecondPerPod: 100, requestDurations: 'lognormal:p50=80ms,p99=2s,max=2400ms' };

/** One LB behaviour, by vendor and setting, in the spec's words. */
type Row = { family: string; label: string; loadBalancer: Record<string, unknown>; health?: Record<string, unknown> };

const ROWS: Row[] = [
  {
    family: 'a "stop new" signal',
    label: 'HAProxy `disable-on-404`, `shutdown-sessions`',
    loadBalancer: { model: 'haproxy', disableOn404: true, onMarkedDown: 'shutdown-sessions' },
  },
  { family: 'a "stop new" signal', label: 'NetScaler `-trofsCode`, `downStateFlush ENABLED`', loadBalancer: { model: 'citrix', trofsCode: 299 } },
  {
    family: 'a "stop new" signal',
    label: 'F5 `recv-disable`, `service-down-action reset`',
    loadBalancer: { model: 'f5', recvDisable: 'DRAINING', serviceDownAction: 'reset' },
  },
  { family: 'keeps sessions on DOWN', label: 'HAProxy, no `shutdown-sessions`', loadBalancer: { model: 'haproxy' } },
  { family: 'keeps sessions on DOWN', label: 'NetScaler `downStateFlush DISABLED`', loadBalancer: { model: 'citrix', downStateFlush: 'DISABLED' } },
  { family: 'keeps sessions on DOWN', label: 'F5 `service-down-action none` (default)', loadBalancer: { model: 'f5' } },
  {
    family: 'keeps sessions on DOWN',
    label: 'NLB ip targets, connection termination off',
    loadBalancer: { model: 'nlb', targetType: 'ip', unhealthyConnectionTermination: false },
    health: { exposure: 'clusterIP' },
  },
  {
    family: 'keeps sessions on DOWN',
    label: 'in-mesh Envoy, active health check 2 s',
    loadBalancer: { model: 'envoy', activeHealthCheck: { interval: 2 } },
    health: { exposure: 'clusterIP' },
  },
  {
    family: 'cuts sessions, re-sends refused',
    label: 'HAProxy `shutdown-sessions` + `redispatch`',
    loadBalancer: { model: 'haproxy', onMarkedDown: 'shutdown-sessions', redispatch: true },
  },
  { family: 'cuts sessions, re-sends refused', label: 'NetScaler defaults + AppQoE `retryOnReset`', loadBalancer: { model: 'citrix', retryOnReset: true } },
  {
    family: 'cuts sessions, re-sends refused',
    label: 'F5 `reset` + `reselect-tries 1`',
    loadBalancer: { model: 'f5', serviceDownAction: 'reset', reselectTries: 1 },
  },
  {
    family: 'cuts sessions, loses refused',
    label: 'HAProxy `shutdown-sessions`, no `redispatch`',
    loadBalancer: { model: 'haproxy', onMarkedDown: 'shutdown-sessions' },
  },
  { family: 'cuts sessions, loses refused', label: 'NetScaler defaults (`downStateFlush ENABLED`)', loadBalancer: { model: 'citrix' } },
  { family: 'cuts sessions, loses refused', label: 'F5 `service-down-action reset`', loadBalancer: { model: 'f5', serviceDownAction: 'reset' } },
  {
    family: 'cuts sessions, loses refused',
    label: 'NLB ip targets (defaults: connection termination on)',
    loadBalancer: { model: 'nlb', targetType: 'ip' },
    health: { exposure: 'clusterIP' },
  },
];

export type SequenceRow = {
  family: string;
  label: string;
  onDown: string;
  refused: string;
  /** Expected requests lost per pod termination, per order; null where the LB cannot run it. */
  loss: Record<Sequence, number | null>;
  plan: Sequence;
};

export type SequencesFile = { traffic: typeof REFERENCE_TRAFFIC; command: string; rows: SequenceRow[] };

const round = (n: number): number => Math.round(n * 100) / 100;

/** Every row, planned now. */
export function computeSequences(): SequencesFile {
  return {
    traffic: REFERENCE_TRAFFIC,
    command: 'npm run build && node dist/test/plan/sequences-main.js',
    rows: ROWS.map((r) => {
      const plan = planGateway(resolved({ spec: { loadBalancer: r.loadBalancer, traffic: REFERENCE_TRAFFIC, ...(r.health ? { health: r.health } : {}) } }));
      const loss = Object.fromEntries(
        SEQUENCES.map((s) => {
          const o = plan.orders.find((x) => x.order === s)!;
          return [s, o.runnable ? round(o.expected) : null];
        }),
      ) as Record<Sequence, number | null>;
      return {
        family: r.family,
        label: r.label,
        onDown: plan.loadBalancer.cutsSessionsOnDown ? 'cuts' : 'keeps',
        refused: plan.loadBalancer.refused.value === 'resent' ? 're-sent' : plan.loadBalancer.refused.value === 'failed' ? 'lost' : 'not known',
        loss,
        plan: plan.sequence,
      };
    }),
  };
}

export const SEQUENCES_FILE = join('docs', 'sequences.json');

const num = (n: number | null): string => (n === null ? '–' : n >= 100 ? Math.round(n).toLocaleString('en') : n.toFixed(2));

/** What each sequence does, in the sidecar's steps (the same words as src/plan/timeline.ts's events). */
const STEPS: Record<Sequence, string> = {
  'soft-drain': 'answer the soft signal, wait the LB buffer, drain the proxy, wait for zero in-flight, then fail hard',
  'health-first': 'fail health, wait the LB buffer, drain, wait for zero',
  'drain-first': 'stop accepting new connections (an open one closes with its next response), wait for zero, then fail health',
};

/** The generated block: what each order does, then each LB behaviour with each order's expected loss and the plan's. */
export function renderSequences(f: SequencesFile): string {
  const t = f.traffic;
  return [
    '| sequence | what the sidecar does |',
    '|---|---|',
    ...SEQUENCES.map((s) => `| \`${s}\` | ${STEPS[s]} |`),
    '',
    `Expected requests lost per pod termination, by the loss model \`gracegate simulate\` runs (docs/simulate.md), at ${t.requestsPerSecondPerPod} requests/s per pod of \`${t.requestDurations}\` (spec.traffic; \`longRequestP99Seconds: ${t.longRequestP99Seconds}\`), each LB at its vendor's default probe timings; – where the LB offers no graceful signal. The plan runs the least (docs/sequences.json; \`${f.command}\` rewrites it):`,
    '',
    '| LB, setting | on DOWN | a refused connection | soft-drain | health-first | drain-first | the plan runs |',
    '|---|---|---|---|---|---|---|',
    ...f.rows.map(
      (r) =>
        `| ${r.label} | ${r.onDown} sessions | ${r.refused} | ${num(r.loss['soft-drain'])} | ${num(r.loss['health-first'])} | ${num(r.loss['drain-first'])} | \`${r.plan}\` |`,
    ),
  ].join('\n');
}

export const SEQUENCE_MARKERS = ['<!-- generated from docs/sequences.json: sequences -->', '<!-- end sequences -->'] as const;

/** The documents that carry the block. */
export const SEQUENCE_DOCS = ['README.md', join('docs', 'facts.md')];

export function writeSequences(root: string): void {
  const f = computeSequences();
  writeFileSync(join(root, SEQUENCES_FILE), `${JSON.stringify(f, null, 2)}\n`);
  for (const doc of SEQUENCE_DOCS) writeFileSync(join(root, doc), spliceBetween(readFileSync(join(root, doc), 'utf8'), SEQUENCE_MARKERS, renderSequences(f)));
}

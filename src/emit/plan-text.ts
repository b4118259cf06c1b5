import type { Derived } from '../model/derived';
import type { Plan } from '../plan/plan-gateway';
import { minReadyBuys } from './rollout-text';
import { TERMINATION_EVENTS } from '../contract/hc';
import { TIMING_ORDER } from '../plan/timings';
import { fateParts, lossText } from '../plan/order-choice';
import { longLivedLines } from './long-lived-text';
import { scalingLines } from './scaling-text';
import { wrapLine } from './wrap';

function inputsText(d: Derived): string {
  return Object.entries(d.inputs)
    .map(([name, i]) => `${name}=${i.value} (${i.source})`)
    .join('; ');
}

/**
 * Aligned columns; the last cell (a note) wraps under itself. Where aligning it would leave it less
 * than half the width, it follows the cell before it instead and wraps under that one.
 */
function table(rows: string[][], width: number): string[] {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? '').length)));
  const lastAt = widths.slice(0, -1).reduce((a, w) => a + w + 2, 0);
  const alignLast = lastAt <= width / 2;
  const hang = alignLast ? lastAt + 2 : widths.slice(0, -2).reduce((a, w) => a + w + 2, 0);
  return rows.flatMap((r) => {
    const cells = r.map((cell, col) => (col < r.length - (alignLast ? 1 : 2) ? cell.padEnd(widths[col]!) : cell));
    return wrapLine(cells.join('  ').trimEnd(), width, hang);
  });
}

/** What the bracketed numbers of the timeline are (docs/facts.md §1), in one wrapped paragraph. */
function eventLegend(): string {
  const events = TERMINATION_EVENTS.map((e) => `[${e.id}] ${e.title}`).join(', ');
  return `  [1]..[6] are the six events of a termination (docs/facts.md §1): ${events}. ≤ means at the latest.`;
}

/**
 * Each order with the requests one pod termination is expected to lose, by cause, under the traffic
 * the plan assumes (each number with its source), and why the chosen one wins.
 */
function ordersLines(plan: Plan, width: number): string[] {
  const t = plan.traffic;
  const head = wrapLine(
    `orders (expected requests lost per pod termination, by the loss model gracegate simulate runs, docs/simulate.md; traffic ${t.requestsPerSecondPerPod} requests/s per pod: ${t.requestsPerSecondSource}; request lengths ${t.requestDurations}: ${t.requestDurationsSource})`,
    width,
    2,
  );
  const rows = plan.orders.map((o) => {
    const mark = o.order === plan.sequence ? '* ' : '  ';
    if (!o.runnable) return [`  ${mark}${o.order}`, '-', `not runnable: ${o.notRunnable}`];
    const causes = [
      ...fateParts(o.byFate, [
        ['refused', (n) => `${n} refused`],
        ['cutAtDown', (n) => `${n} cut at DOWN`],
        ['cutAtExit', (n) => `${n} cut at exit`],
        ['keepAliveRace', (n) => `${n} keep-alive race`],
        ['redispatched', (n) => `(${n} re-sent elsewhere, not lost)`],
      ]),
      ...(o.ifKnownBetter !== undefined ? [`(${lossText(o.ifKnownBetter)} if the LB re-sends refused connections)`] : []),
    ];
    return [`  ${mark}${o.order}`, lossText(o.expected), causes.length > 0 ? causes.join(', ') : 'nothing lost'];
  });
  const w0 = Math.max(...rows.map((r) => r[0]!.length));
  const w1 = Math.max(...rows.map((r) => r[1]!.length));
  const body = rows.flatMap((r) => wrapLine(`${r[0]!.padEnd(w0)}  ${r[1]!.padStart(w1)}  ${r[2]}`, width, w0 + w1 + 4));
  const tail = [
    `  * the plan's: ${plan.sequenceReason}`,
    ...(plan.decidingUnknown ? [`  not known, and it would change the choice: ${plan.decidingUnknown}`] : []),
    ...plan.lbOptions.map((o) => `  option: ${o.fix.description}: ${o.order} would lose ${lossText(o.expected)} (gracegate lb-config prints the LB lines)`),
  ].flatMap((l) => wrapLine(l, width, 4));
  return [...head, ...body, ...tail];
}

export type PlanTextOptions = {
  /** Wrap lines at this many columns (the terminal's width; src/emit/wrap.ts textWidth). @default 100 */
  width?: number;
};

/** Where the LB's probe enters the pod (plan.healthProbe.via), in the plan's words. */
const PROBE_ENTRY: Record<Plan['healthProbe']['via'], string> = {
  'gateway-service': "a port of the gateway's own Service",
  'health-service': 'a health Service of its own',
  'host-port': "the pod's hostPort",
  lb: "the LB's own way",
};

/** The plan for people: short, aligned, wrapped to the width, every number followed by where it came from. */
export function renderPlanText(plan: Plan, options: PlanTextOptions = {}): string {
  const width = options.width ?? 100;
  const lines: string[] = [];
  // Each line wraps with its own hanging indent: under its text, never past half the width.
  const push = (text: string, hang: number) => lines.push(...wrapLine(text, width, Math.min(hang, Math.floor(width / 2))));
  const LABEL = 11;
  const lb = plan.loadBalancer;
  push(`gateway    ${plan.gateway.namespace}/${plan.gateway.name}`, LABEL);
  push(`lb         ${lb.model}: detects a failing probe in ${lb.lbDetectSeconds}s; on DOWN: ${lb.onDown}`, LABEL);
  push(`           refused connections: ${lb.refused.detail}`, LABEL);
  if (lb.gracefulSignal)
    push(
      `           graceful signal: ${lb.gracefulSignal.status}${lb.gracefulSignal.body ? ` + body "${lb.gracefulSignal.body}"` : ''} → ${lb.gracefulSignal.lbState}`,
      LABEL,
    );
  push(`sequence   ${plan.sequence}: ${plan.sequenceReason}`, LABEL);
  lines.push('', ...ordersLines(plan, width));
  push(
    `hc sidecar ${plan.hcSidecar.kind === 'native' ? 'native (init container, restartPolicy Always)' : 'ordinary container'}: ${plan.hcSidecar.reason}`,
    LABEL,
  );
  push(`probe      ${PROBE_ENTRY[plan.healthProbe.via]}: ${plan.healthProbe.reason}`, LABEL);
  lines.push('', 'timings');
  const keyWidth = Math.max(...TIMING_ORDER.map((k) => k.length));
  for (const k of TIMING_ORDER) {
    const d = plan.derivations[k];
    push(`  ${k.padEnd(keyWidth)}  ${`${d.value}${d.unit === 'seconds' ? 's' : ''}`.padStart(6)}  = ${d.formula}`, keyWidth + 14);
    push(`      ${inputsText(d)}`, 6);
  }
  push('', 0);
  push(`timeline (seconds after preStop starts; ${plan.timeline.lossless ? 'lossless' : 'NOT lossless'}: ${plan.timeline.losslessReason})`, 2);
  push(eventLegend(), 2);
  lines.push(
    ...table(
      plan.timeline.entries.map((e) => [`  ${e.bound === 'by' ? '≤' : ' '}${e.atSeconds}s`, e.event ? `[${e.event}]` : '   ', e.name, `— ${e.note}`]),
      width,
    ),
  );
  const r = plan.rollout;
  scalingLines(plan).forEach((l, i) => {
    if (i === 0) lines.push('');
    push(`${i === 0 ? 'scaling    ' : '           '}${l}`, LABEL);
  });
  longLivedLines(plan).forEach((l, i) => {
    if (i === 0) lines.push('');
    push(`${i === 0 ? 'long-lived ' : '           '}${l}`, LABEL);
  });
  lines.push('');
  push(
    `rollout    maxSurge ${r.maxSurge}, maxUnavailable ${r.maxUnavailable}, minReadySeconds ${plan.timings.minReadySeconds}, anti-affinity ${r.antiAffinity}, PDB ${r.pdbMaxUnavailable === null ? 'none' : `maxUnavailable ${r.pdbMaxUnavailable}`} (${r.reason}); ${minReadyBuys(plan)}`,
    LABEL,
  );
  lines.push('', plan.findings.length === 0 ? 'findings   none' : 'findings');
  for (const f of plan.findings) {
    push(`  ${f.severity.padEnd(7)} ${f.id} (${f.field}): ${f.message}`, 10);
    push(`          fix: ${f.remediation}`, 15);
    if (f.evidence) push(`          measured: ${f.evidence}`, 20);
  }
  return `${lines.join('\n')}\n`;
}

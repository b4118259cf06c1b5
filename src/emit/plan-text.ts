import type { Derived } from '../model/derived';
import type { Plan } from '../plan/plan-gateway';
import { TERMINATION_EVENTS } from '../contract/hc';
import { TIMING_ORDER } from '../plan/timings';
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

export type PlanTextOptions = {
  /** Wrap lines at this many columns (the terminal's width; src/emit/wrap.ts textWidth). @default 100 */
  width?: number;
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
  push(
    `hc sidecar ${plan.hcSidecar.kind === 'native' ? 'native (init container, restartPolicy Always)' : 'ordinary container'}: ${plan.hcSidecar.reason}`,
    LABEL,
  );
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
    `rollout    maxSurge ${r.maxSurge}, maxUnavailable ${r.maxUnavailable}, minReadySeconds ${plan.timings.minReadySeconds}, anti-affinity ${r.antiAffinity}, PDB ${r.pdbMaxUnavailable === null ? 'none' : `maxUnavailable ${r.pdbMaxUnavailable}`} (${r.reason})`,
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

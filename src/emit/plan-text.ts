import type { Derived } from '../plan/derived';
import type { Plan } from '../plan/plan-gateway';
import { TIMING_ORDER } from '../plan/timings';
import { scalingLines } from './scaling-text';

function inputsText(d: Derived): string {
  return Object.entries(d.inputs).map(([name, i]) => `${name}=${i.value} (${i.source})`).join('; ');
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? '').length)));
  return rows.map((r) => r.map((cell, col) => (col === r.length - 1 ? cell : cell.padEnd(widths[col]!))).join('  ').trimEnd());
}

/** The plan for people: short, aligned, every number followed by where it came from. */
export function renderPlanText(plan: Plan): string {
  const lines: string[] = [];
  const lb = plan.loadBalancer;
  lines.push(`gateway    ${plan.gateway.namespace}/${plan.gateway.name}`);
  lines.push(`lb         ${lb.model}: detects a failing probe in ${lb.lbDetectSeconds}s; on DOWN: ${lb.onDown}`);
  lines.push(`           refused connections: ${lb.resendDetail}`);
  if (lb.gracefulSignal) lines.push(`           graceful signal: ${lb.gracefulSignal.status}${lb.gracefulSignal.body ? ` + body "${lb.gracefulSignal.body}"` : ''} → ${lb.gracefulSignal.lbState}`);
  lines.push(`sequence   ${plan.sequence}: ${plan.sequenceReason}`);
  lines.push('', 'timings');
  const width = Math.max(...TIMING_ORDER.map((k) => k.length));
  for (const k of TIMING_ORDER) {
    const d = plan.derivations[k];
    lines.push(`  ${k.padEnd(width)}  ${`${d.value}${d.unit === 'seconds' ? 's' : ''}`.padStart(6)}  = ${d.formula}`);
    lines.push(`  ${''.padEnd(width)}          ${inputsText(d)}`);
  }
  lines.push('', `timeline (seconds after preStop starts; ${plan.timeline.lossless ? 'lossless' : 'NOT lossless'}: ${plan.timeline.losslessReason})`);
  lines.push(...table(plan.timeline.entries.map((e) => [
    `  ${e.bound === 'by' ? '≤' : ' '}${e.atSeconds}s`, e.event ? `[${e.event}]` : '   ', e.name, `— ${e.note}`,
  ])));
  const r = plan.rollout;
  lines.push(...scalingLines(plan).map((l, i) => `${i === 0 ? '\nscaling    ' : '           '}${l}`));
  lines.push('', `rollout    maxSurge ${r.maxSurge}, maxUnavailable ${r.maxUnavailable}, minReadySeconds ${plan.timings.minReadySeconds}, anti-affinity ${r.antiAffinity}, PDB ${r.pdbMaxUnavailable === null ? 'none' : `maxUnavailable ${r.pdbMaxUnavailable}`} (${r.reason})`);
  lines.push('', plan.findings.length === 0 ? 'findings   none' : 'findings');
  for (const f of plan.findings) {
    lines.push(`  ${f.severity.padEnd(7)} ${f.id} (${f.field}): ${f.message}`);
    lines.push(`          fix: ${f.remediation}`);
    if (f.evidence) lines.push(`          measured: ${f.evidence}`);
  }
  return `${lines.join('\n')}\n`;
}

import type { LintReport } from '../lint';
import type { LintFinding } from '../rule';

function numbersLine(f: LintFinding): string[] {
  if (!f.numbers) return [];
  return Object.entries(f.numbers).map(([k, v]) => `      ${k} = ${v.value}  (${v.source})`);
}

function findingLines(f: LintFinding, suppressedBy?: string): string[] {
  return [
    `  ${f.severity.toUpperCase().padEnd(7)} ${f.rule}  ${f.field || '(object)'}  ${f.file}:${f.line}`,
    `    ${f.message}`,
    ...(f.lbView ? [`    the LB's view inferred from ${f.lbView.source} (${f.lbView.file}:${f.lbView.line})`] : []),
    ...(f.numbers ? ['    numbers:', ...numbersLine(f)] : []),
    ...(f.formula ? [`    formula: ${f.formula}`] : []),
    ...(f.related ?? []).map((r) => `    see also: ${r.object} ${r.field} (${r.file}:${r.line})`),
    `    fix: ${f.remediation}`,
    ...(f.fix ? [`    machine-applicable: ${f.fix.description}`] : []),
    ...(suppressedBy ? [`    suppressed by ${suppressedBy}`] : []),
  ];
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** For people: findings grouped by the object to change, each with its numbers, formula and fix. */
export function renderLintText(report: LintReport): string {
  const out: string[] = [];
  let last = '';
  for (const f of report.findings) {
    if (f.object !== last) {
      if (last !== '') out.push('');
      out.push(f.object);
      last = f.object;
    }
    out.push(...findingLines(f));
  }
  if (report.suppressed.length > 0) {
    out.push('', `Suppressed (${report.suppressed.length}):`);
    for (const s of report.suppressed) out.push(`  ${s.object} ${s.rule} ${s.file}:${s.line}: ${s.suppression.reason} (${s.suppression.annotation})`);
  }
  if (report.unread && report.unread.length > 0) {
    out.push('', `Not read (${report.unread.length}): the rules ran without these objects`);
    for (const u of report.unread) out.push(`  ${u}`);
  }
  const count = (sev: string) => report.findings.filter((f) => f.severity === sev).length;
  out.push(
    '',
    report.findings.length === 0
      ? `no findings in ${plural(report.objects, 'object')}${report.suppressed.length ? `, ${report.suppressed.length} suppressed` : ''}`
      : `${plural(report.findings.length, 'finding')} (${count('error')} error, ${count('warning')} warning, ${count('info')} info) in ${plural(report.objects, 'object')}${report.suppressed.length ? `, ${report.suppressed.length} suppressed` : ''}; rules: docs/lint.md`,
  );
  return `${out.join('\n').replace(/^\n/, '')}\n`;
}

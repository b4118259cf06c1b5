import type { LintReport } from '../lint';

/** For scripts: `{"findings": [{rule, severity, object, message, ...}], "suppressed": [...]}`. */
export function renderLintJson(report: LintReport): string {
  return `${JSON.stringify({ findings: report.findings, suppressed: report.suppressed, objects: report.objects, ...(report.unread ? { unread: report.unread } : {}) }, null, 2)}\n`;
}

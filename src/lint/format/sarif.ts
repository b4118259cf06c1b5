import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Severity } from '../../model/finding';
import type { LintReport } from '../lint';
import { LINT_RULES, UNKNOWN_IGNORE_RULE } from '../registry';
import type { LintFinding, SuppressedFinding } from '../rule';

/**
 * SARIF 2.1.0 (OASIS), the format GitHub code scanning reads: one run, every rule with its
 * rationale as help, every finding located on the file and line of the field to change.
 */

export const SARIF_SCHEMA = 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json';

const LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', info: 'note' };

/**
 * The file as a URI: a relative reference for a relative name (each path segment percent-encoded),
 * a `file:` URI for an absolute one (a relative reference may not begin with a slash: the SARIF
 * Multitool's SARIF1004).
 */
function uriOf(file: string): string {
  if (isAbsolute(file)) return pathToFileURL(file).href;
  return file
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/');
}

function location(file: string, line: number, object: string, field: string) {
  return {
    physicalLocation: { artifactLocation: { uri: uriOf(file) }, region: { startLine: line } },
    logicalLocations: [{ fullyQualifiedName: field ? `${object}:${field}` : object, kind: 'object' }],
  };
}

export function renderLintSarif(report: LintReport, version: string): string {
  const rules = [...LINT_RULES, UNKNOWN_IGNORE_RULE];
  const index = new Map(rules.map((r, i) => [r.id, i] as const));
  const result = (f: LintFinding | SuppressedFinding) => ({
    ruleId: f.rule,
    ruleIndex: index.get(f.rule)!,
    level: LEVEL[f.severity],
    message: { text: `${f.message}. Fix: ${f.remediation}` },
    locations: [location(f.file, f.line, f.object, f.field)],
    ...(f.related?.length || f.lbView
      ? {
          relatedLocations: [...(f.related ?? []), ...(f.lbView ? [f.lbView] : [])].map((r, i) => ({
            id: i,
            ...location(r.file, r.line, r.object, r.field),
            ...('statement' in r ? { message: { text: r.statement } } : {}),
          })),
        }
      : {}),
    ...('suppression' in f ? { suppressions: [{ kind: 'inSource', justification: `${f.suppression.annotation}: ${f.suppression.reason}` }] } : {}),
    properties: {
      object: f.object,
      field: f.field,
      remediation: f.remediation,
      ...(f.numbers ? { numbers: f.numbers } : {}),
      ...(f.formula ? { formula: f.formula } : {}),
      ...(f.fix ? { fix: f.fix } : {}),
      ...(f.lbView ? { lbView: f.lbView } : {}),
    },
  });
  const log = {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'gracegate',
            version,
            rules: rules.map((r) => ({
              id: r.id,
              shortDescription: { text: r.summary },
              fullDescription: { text: r.rationale },
              help: { text: `${r.rationale} (docs/lint.md#${r.id})`, markdown: `${r.rationale}\n\nMore: docs/lint.md, rule \`${r.id}\`.` },
              defaultConfiguration: { level: LEVEL[r.severity] },
            })),
          },
        },
        results: [...report.findings.map(result), ...report.suppressed.map(result)],
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}

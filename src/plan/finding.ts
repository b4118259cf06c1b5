/** A trap found in the user's setup: kebab-case id, severity, the field to change, and the fix. */
export type Severity = 'error' | 'warning' | 'info';

export type Finding = {
  id: string;
  severity: Severity;
  /** The spec field the user should look at. */
  field: string;
  message: string;
  remediation: string;
  /** What the end-to-end harness should expect to measure when this finding stands (client-visible loss). */
  expectedLoss?: ExpectedLoss;
};

/**
 * Client-visible loss a finding predicts: `cut-connects-at-down` is the few requests the LB is
 * still connecting to the pod at the instant it marks it DOWN and flushes (drain-first's residue);
 * `keepalive-race` a request the LB sent on a connection the draining pod closed at that instant.
 */
export type ExpectedLoss = 'none' | 'refused-connections' | 'reset-sessions' | 'cut-connects-at-down' | 'keepalive-race' | 'unknown';

export const SEVERITY_RANK: Record<Severity, number> = { error: 3, warning: 2, info: 1 };

/** The severity at or above which findings fail a command or a synthesis; `none` fails nothing. */
export type FailOn = Severity | 'none';
export const FAIL_ON_VALUES: readonly FailOn[] = ['error', 'warning', 'info', 'none'];

/** The findings that reach `failOn`. */
export function blockingFindings(findings: readonly Finding[], failOn: FailOn): Finding[] {
  if (failOn === 'none') return [];
  return findings.filter((f) => SEVERITY_RANK[f.severity] >= SEVERITY_RANK[failOn]);
}

import { findingLines } from '../emit/plan-summary';
import { blockingFindings, type FailOn, type Finding } from '../model/finding';

/**
 * What synth says of a plan's findings: those at or above --fail-on hold the spec back (nothing is
 * written), the other warnings and errors are printed before "wrote" so that they are seen.
 */

/** The findings at or above --fail-on, worded, one per line with its fix; undefined when none. */
export function blockedBy(specPath: string, findings: readonly Finding[], failOn: FailOn): string | undefined {
  const blocking = blockingFindings(findings, failOn);
  return blocking.length > 0 ? blocking.map((f) => findingLines(specPath, f)).join('\n') : undefined;
}

/** The warnings and errors a written spec carries (info findings stay in PLAN.md), worded. */
export function shownFindings(specPath: string, findings: readonly Finding[]): string[] {
  return findings.filter((f) => f.severity !== 'info').map((f) => findingLines(specPath, f));
}

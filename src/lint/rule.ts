import type { Severity } from '../model/finding';
import type { LintContext } from './context';
import type { LbProbe } from './lb-probe';
import type { LintObject } from './objects';
import type { Path } from '../core/json';
import type { Fix as FixOf, FixEdit as SpecFixEdit } from '../core/fix';

/**
 * One edit of a machine-applicable fix (src/core/fix.ts), in the object it names: set a field to a
 * value, or remove it. Applying every edit of a fix and linting again must make its finding go
 * away, and no finding then may ask for the edit to be undone (test/lint/fix-walk.test.ts walks
 * every fixture so).
 */
export type FixEdit = SpecFixEdit & { object: string };

export type Fix = FixOf<FixEdit>;

/** A finding as a rule reports it, before it is located and checked against suppressions. */
export type LintFindingDraft = {
  object: LintObject;
  /** The field to change, in `object`. */
  path: Path;
  message: string;
  remediation: string;
  /** The numbers the finding compares, each with where it came from. */
  numbers?: Record<string, { value: number | string | boolean; source: string }>;
  /** How the compared bound is computed, in words of the numbers' names. */
  formula?: string;
  /** Other objects and fields involved (the Service of a pod, the PDB next to another). */
  related?: Array<{ object: LintObject; path: Path }>;
  fix?: Fix;
  /** The LB's view the finding stands on (an LB-side rule's inference), stated with the finding. */
  lbProbe?: LbProbe;
  /** Only for a rule whose severity depends on what the input shows (stated in its summary). */
  severity?: Severity;
};

/**
 * One termination trap, one rule: its id and severity, why it is a trap with the source that
 * establishes it, and `check`, which reads the parsed objects (and the plan or the LB when given)
 * and returns a draft per object where the trap stands.
 */
export type LintRule = {
  id: string;
  severity: Severity;
  /** One line: what the rule finds. */
  summary: string;
  /** Why it loses requests or blocks a rollout, and the source that establishes it. */
  rationale: string;
  check(ctx: LintContext): LintFindingDraft[];
};

/** A located finding: what every output format prints. */
export type LintFinding = {
  rule: string;
  severity: Severity;
  /** `Kind/namespace/name` of the object to change. */
  object: string;
  /** The field to change, for people (`spec.template.spec.terminationGracePeriodSeconds`). */
  field: string;
  path: Path;
  file: string;
  line: number;
  message: string;
  remediation: string;
  numbers?: LintFindingDraft['numbers'];
  formula?: string;
  related?: Array<{ object: string; field: string; file: string; line: number }>;
  fix?: Fix;
  /** What lint inferred of the LB's view, and the field of the input that shows it. */
  lbView?: { statement: string; source: string; object: string; field: string; file: string; line: number };
};

/** A finding an object's `gracegate.dev/ignore` annotation suppressed, and why (its reason annotation). */
export type SuppressedFinding = LintFinding & { suppression: { annotation: string; reason: string } };

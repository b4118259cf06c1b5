import type { Fix } from '../core/fix';

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
  /** Where the measurement behind the finding is written up: a shipped document and its section. */
  evidence?: string;
  /**
   * The remediation as edits to the spec (src/core/fix.ts), alternatives in the remediation's order.
   * Each one clears this finding when applied, and none leads to a finding whose fix undoes it
   * (test/plan/advice-circle.test.ts). Absent where the fix is not a spec edit (upgrade a chart,
   * move streams to another gateway).
   */
  fixes?: Fix[];
};

/** A finding's words, as a rule produces them when the finding stands. */
export type FindingText = Pick<Finding, 'message' | 'remediation'> & Pick<Partial<Finding>, 'expectedLoss' | 'evidence' | 'fixes'>;

/**
 * The findings engine, for the plan of a gateway, of a workload, and for lint: one trap, one rule,
 * and each finding id raised by exactly one rule (test/finding-ids.test.ts), so `grep` on an id
 * lands on the file that decides and words it.
 *
 * A rule: its id, severity and field, and `check`, which returns the finding's words when the trap
 * stands and undefined when it does not. `Ctx` is what the rule reads (a gateway's PlanContext, a
 * workload's); a vendor's rules also get its own narrowed LB block (`Extra`).
 */
export type RuleOf<Ctx, Extra extends unknown[] = []> = {
  id: string;
  severity: Severity;
  field: string;
  check(ctx: Ctx, ...extra: Extra): FindingText | undefined;
};

/**
 * A rule more than one product raises (a gateway and a workload; lint reuses its words): one id,
 * one trap, its words for each product, read from facts each product computes the same way, and
 * the spec field each product's user changes. A product lists it through forProduct.
 */
export type SharedRule<Facts, Product extends string> = {
  id: string;
  severity: Severity;
  field: Readonly<Record<Product, string>>;
  check(facts: Facts): FindingText | undefined;
};

/** A shared rule as one product lists it: its facts read from the product's context (none: it does not apply), its field the product's. */
export function forProduct<Ctx, Facts, Product extends string>(
  rule: SharedRule<Facts, Product>,
  product: Product,
  facts: (ctx: Ctx) => Facts | undefined,
): RuleOf<Ctx> {
  return {
    id: rule.id,
    severity: rule.severity,
    field: rule.field[product],
    check: (ctx) => {
      const f = facts(ctx);
      return f === undefined ? undefined : rule.check(f);
    },
  };
}

/** The findings the rules report for this plan, in the rules' order. */
export function applyRules<Ctx, Extra extends unknown[]>(rules: ReadonlyArray<RuleOf<Ctx, Extra>>, ctx: Ctx, ...extra: Extra): Finding[] {
  return rules.flatMap((rule) => {
    const text = rule.check(ctx, ...extra);
    return text ? [{ id: rule.id, severity: rule.severity, field: rule.field, ...text }] : [];
  });
}

/**
 * Client-visible loss a finding predicts: `cut-connects-at-down` is the few requests the LB is
 * still connecting to the pod at the instant it marks it DOWN and flushes (drain-first's residue);
 * `keepalive-race` a request the LB sent on a connection the draining pod closed at that instant;
 * `reused-connection-cut-at-down` a request the LB sent on a reused connection after in-flight
 * reached 0, still running when the flush at DOWN cuts it.
 */
export type ExpectedLoss =
  | 'none'
  | 'refused-connections'
  | 'reset-sessions'
  | 'cut-connects-at-down'
  | 'keepalive-race'
  | 'reused-connection-cut-at-down'
  | 'unknown';

export const SEVERITY_RANK: Record<Severity, number> = { error: 3, warning: 2, info: 1 };

/** The severity at or above which findings fail a command or a synthesis; `none` fails nothing. */
export type FailOn = Severity | 'none';
export const FAIL_ON_VALUES: readonly FailOn[] = ['error', 'warning', 'info', 'none'];

/**
 * How much a `failOn` level refuses: the number of severities it blocks (the order blockingFindings
 * follows): none 0, error 1, warning 2, info 3.
 */
export function failOnStrictness(failOn: FailOn): number {
  if (failOn === 'none') return 0;
  return Object.values(SEVERITY_RANK).filter((rank) => rank >= SEVERITY_RANK[failOn]).length;
}

/** The findings that reach `failOn`. */
export function blockingFindings(findings: readonly Finding[], failOn: FailOn): Finding[] {
  if (failOn === 'none') return [];
  return findings.filter((f) => SEVERITY_RANK[f.severity] >= SEVERITY_RANK[failOn]);
}

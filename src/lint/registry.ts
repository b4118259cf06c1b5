import type { LintRule } from './rule';
import { AVAILABILITY_RULES } from './rules/availability';
import { GRACE_RULES } from './rules/grace-period';
import { ISTIO_DRAIN_RULES } from './rules/istio-drain';
import { PLAN_RULES } from './rules/plan-mismatch';
import { PROBE_RULES } from './rules/probes';
import { PROXY_HOLD_RULES } from './rules/proxy-hold';
import { ROLLOUT_RULES } from './rules/rollout';
import { SERVICE_RULES } from './rules/services';
import { START_HOLD_RULES } from './rules/start-hold';

/**
 * Every lint rule, one trap each, in the order people read them: the proxy's hold and the grace
 * period, Istio's drain settings, probes, the Services the LB probes through, the rollout and
 * disruption budgets, what keeps pods serving through node drains, and with --spec the plan
 * itself. docs/lint.md documents each.
 */
export const LINT_RULES: readonly LintRule[] = [
  ...PROXY_HOLD_RULES,
  ...GRACE_RULES,
  ...ISTIO_DRAIN_RULES,
  ...PROBE_RULES,
  ...SERVICE_RULES,
  ...START_HOLD_RULES,
  ...ROLLOUT_RULES,
  ...AVAILABILITY_RULES,
  ...PLAN_RULES,
];

/** A suppression that names no rule: reported, so a typo does not silently suppress nothing. */
export const UNKNOWN_IGNORE_RULE: LintRule = {
  id: 'ignore-unknown-rule',
  severity: 'warning',
  summary: 'a gracegate.dev/ignore annotation names a rule gracegate does not have',
  rationale: 'A misspelt rule id suppresses nothing; saying so keeps the annotation honest.',
  check: () => [],
};

export function ruleById(id: string): LintRule | undefined {
  return LINT_RULES.find((r) => r.id === id) ?? (id === UNKNOWN_IGNORE_RULE.id ? UNKNOWN_IGNORE_RULE : undefined);
}

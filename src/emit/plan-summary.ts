import type { Finding } from '../model/finding';
import { chosenOrder, lossText } from '../plan/order-choice';
import type { Plan } from '../plan/plan-gateway';
import type { WorkloadPlan } from '../plan/workload/plan-workload';

/*
 * One line that says what a plan is, printed by `gracegate synth` before the files it wrote: the
 * sequence, the grace period, and the loss the plan expects. The one place it is worded.
 */

/**
 * The loss the plan expects, in words: what the findings that predict one name (each finding's
 * expectedLoss, its id to look up in PLAN.md), or that none predicts one. The one place to render
 * a per-sequence number when the plan carries one.
 */
export function expectedLossText(findings: readonly Finding[]): string {
  const losing = findings.filter((f) => f.expectedLoss !== undefined && f.expectedLoss !== 'none');
  if (losing.length === 0) return 'none predicted';
  return losing.map((f) => `${f.expectedLoss} (${f.id})`).join(', ');
}

/**
 * `istio-ingress/igw-public: drain-first, grace period 100 s, expected loss: 0.80 requests per pod
 * termination; reset-sessions (no-lossless-order), …`: the number is the chosen order's `expected`
 * from the plan's `orders` (plan.json), never recomputed; the findings that predict it follow.
 */
export function planSummary(plan: Plan): string {
  const chosen = chosenOrder(plan);
  return `${plan.gateway.namespace}/${plan.gateway.name}: ${plan.sequence}, grace period ${plan.timings.terminationGracePeriodSeconds} s, expected loss: ${lossText(chosen.expected)} requests per pod termination; ${expectedLossText(plan.findings)}`;
}

/** `default/my-app: preStop sleep 5 s, shutdown timeout 40 s, grace period 50 s, expected loss: none predicted`. */
export function workloadPlanSummary(plan: WorkloadPlan): string {
  const t = plan.timings;
  const preStop = plan.preStop.action === 'none' ? 'no preStop' : `preStop ${plan.preStop.action} ${t.preStopSeconds} s`;
  return `${plan.workload.namespace}/${plan.workload.name}: ${preStop}, shutdown timeout ${t.shutdownTimeoutSeconds} s, grace period ${t.terminationGracePeriodSeconds} s, expected loss: ${expectedLossText(plan.findings)}`;
}

/** A finding as synth prints it: the spec, severity, id and field, the message, and the fix on the next line. */
export function findingLines(specPath: string, f: Finding): string {
  return `${specPath}: ${f.severity} ${f.id} (${f.field}): ${f.message}\n  fix: ${f.remediation}`;
}

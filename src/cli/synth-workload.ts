import { synthFiles } from '../delivery/registry';
import { renderWorkloadPlanMarkdown } from '../emit/workload/plan-markdown';
import { GracegateError } from '../core/errors';
import type { FailOn } from '../model/finding';
import { planWorkload } from '../plan/workload/plan-workload';
import { workloadChanges } from '../pod/workload/pod-changes';
import type { ResolvedWorkloadSpec } from '../schema/spec-kinds';
import { workloadPlanSummary } from '../emit/plan-summary';
import { blockedBy, shownFindings } from './synth-findings';
import type { Rendered } from './synth-tree';

/**
 * `gracegate synth` for a GracefulWorkload: its PDB, the plan, and the Kustomize component when
 * asked; `blocked` is the message for the findings at or above --fail-on (nothing is written),
 * `findings` the warnings and errors it is written with.
 */
export function renderWorkload(specPath: string, resolved: ResolvedWorkloadSpec, failOn: FailOn, kustomize: boolean): Rendered {
  const plan = planWorkload(resolved);
  const blocked = blockedBy(specPath, plan.findings, failOn);
  if (blocked) return { files: {}, blocked };
  try {
    const changes = workloadChanges(plan);
    const files: Record<string, string> = {
      ...synthFiles({ kind: 'GracefulWorkload', changes, kustomize }).files,
      'plan.json': `${JSON.stringify(plan, null, 2)}\n`,
      'PLAN.md': renderWorkloadPlanMarkdown(plan),
    };
    return { files, findings: shownFindings(specPath, plan.findings), summary: workloadPlanSummary(plan) };
  } catch (err) {
    if (err instanceof GracegateError) throw err.locate(specPath);
    throw err;
  }
}

import { workloadManifestsYaml } from '../emit/manifests';
import { workloadKustomizeComponent } from '../emit/workload/kustomize';
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
      'manifests.yaml': workloadManifestsYaml(changes),
      'plan.json': `${JSON.stringify(plan, null, 2)}\n`,
      'PLAN.md': renderWorkloadPlanMarkdown(plan),
    };
    if (kustomize) {
      for (const [path, text] of Object.entries(workloadKustomizeComponent(changes))) files[`kustomize/${path}`] = text;
    }
    return { files, findings: shownFindings(specPath, plan.findings), summary: workloadPlanSummary(plan) };
  } catch (err) {
    if (err instanceof GracegateError) throw err.locate(specPath);
    throw err;
  }
}

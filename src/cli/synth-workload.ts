import { workloadManifestsYaml } from '../emit/manifests';
import { workloadKustomizeComponent } from '../emit/workload/kustomize';
import { renderWorkloadPlanMarkdown } from '../emit/workload/plan-markdown';
import { GracegateError } from '../core/errors';
import { blockingFindings, type FailOn } from '../model/finding';
import { planWorkload } from '../plan/workload/plan-workload';
import { workloadChanges } from '../pod/workload/pod-changes';
import type { ResolvedWorkloadSpec } from '../schema/spec-kinds';
import { blockedText } from './load-spec-file';

/**
 * `gracegate synth` for a GracefulWorkload: its PDB, the plan, and the Kustomize component when
 * asked; `blocked` is the message for the findings at or above --fail-on (nothing is written).
 */
export function renderWorkload(
  specPath: string,
  resolved: ResolvedWorkloadSpec,
  failOn: FailOn,
  kustomize: boolean,
): { files: Record<string, string>; blocked?: string } {
  const plan = planWorkload(resolved);
  const blocking = blockingFindings(plan.findings, failOn);
  if (blocking.length > 0) {
    return {
      files: {},
      blocked: `${blockedText(specPath, blocking)}\ngracegate synth: nothing written; fix the finding(s) above, or pass --fail-on none to write anyway\n`,
    };
  }
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
    return { files };
  } catch (err) {
    if (err instanceof GracegateError) throw err.locate(specPath);
    throw err;
  }
}

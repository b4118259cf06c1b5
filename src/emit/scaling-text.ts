import type { Plan } from '../plan/plan-gateway';

/**
 * What the plan says of an autoscaled gateway, as lines for people (plan text, PLAN.md): the HPA's
 * range, the scale-down rules in force with where each came from, and how many pods one
 * scale-down takes out at once. Empty for a fixed replica count.
 */
export function scalingLines(plan: Plan): string[] {
  const s = plan.scaling;
  if (s.mode !== 'autoscaled') return [];
  const r = s.scaleDown;
  const policies = r.policies.map((p) => `${p.value} ${p.type} per ${p.periodSeconds} s`).join(', ');
  return [
    `HorizontalPodAutoscaler: ${s.minReplicas} to ${s.maxReplicas} replicas${s.targetCPUUtilizationPercentage !== undefined ? `, target CPU ${s.targetCPUUtilizationPercentage} %` : ''}; the rollout, anti-affinity and PodDisruptionBudget hold at every count (a PDB does not limit the HPA's own scale-downs: the ReplicaSet deletes those pods directly, no eviction).`,
    `Scale-down rules: policies ${policies} (${r.sources.policies}); selectPolicy ${r.selectPolicy} (${r.sources.selectPolicy}); stabilization window ${r.stabilizationWindowSeconds} s (${r.sources.stabilizationWindowSeconds}).`,
    `Every scale-down is a pod termination running the same sequence (${plan.timings.sequenceSeconds} s).`,
    `Pods one HPA decision takes out together: ${s.scaleDownPodsPerStep.value} = ${s.scaleDownPodsPerStep.formula}.`,
    `Pods draining at the same time (decisions within one sequence): ${s.scaleDownPodsAtOnce.value} = ${s.scaleDownPodsAtOnce.formula}.`,
  ];
}

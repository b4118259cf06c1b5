import type { Affinity, HpaBehavior, PodAffinityTerm } from './k8s';

/** The pod anti-affinity for one term on kubernetes.io/hostname: required, preferred (weight 100), or none. */
export function hostnameAntiAffinity(mode: 'required' | 'preferred' | 'none', term: PodAffinityTerm): Affinity | null {
  switch (mode) {
    case 'required':
      return { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } };
    case 'preferred':
      return { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: term }] } };
    case 'none':
      return null;
  }
}

/**
 * An autoscaling/v2 HPA `spec` with a range, and the CPU target and behaviour where given: a CPU
 * target is the whole metrics list (a strategic merge patch has no key to merge one entry by).
 */
export function hpaSpec(a: { minReplicas: number; maxReplicas: number; targetCPUUtilizationPercentage?: number; behavior?: HpaBehavior }): Record<string, unknown> {
  return {
    minReplicas: a.minReplicas,
    maxReplicas: a.maxReplicas,
    ...(a.targetCPUUtilizationPercentage !== undefined
      ? { metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: a.targetCPUUtilizationPercentage } } }] }
      : {}),
    ...(a.behavior ? { behavior: a.behavior } : {}),
  };
}

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

/** The HPA metric for a CPU utilisation target, in percent of the pods' requests. */
export function cpuMetric(averageUtilization: number): Record<string, unknown> {
  return { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization } } };
}

/**
 * An autoscaling/v2 HPA `spec` with a range, and the CPU target and behaviour where given: a CPU
 * target is the whole metrics list (a strategic merge patch has no key to merge one entry by).
 */
export function hpaSpec(a: {
  minReplicas: number;
  maxReplicas: number;
  targetCPUUtilizationPercentage?: number;
  behavior?: HpaBehavior;
}): Record<string, unknown> {
  return {
    minReplicas: a.minReplicas,
    maxReplicas: a.maxReplicas,
    ...(a.targetCPUUtilizationPercentage !== undefined ? { metrics: [cpuMetric(a.targetCPUUtilizationPercentage)] } : {}),
    ...(a.behavior ? { behavior: structuredClone(a.behavior) } : {}),
  };
}

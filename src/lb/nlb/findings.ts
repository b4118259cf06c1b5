import type { FindingRule } from '../../plan/finding';
import type { NlbLb } from './schema';

export const nlbFindings: FindingRule<[NlbLb]>[] = [
  {
    id: 'nlb-instance-probe-bypasses-sidecar',
    severity: 'error',
    field: 'spec.loadBalancer.targetType',
    check: ({ lb }) => (!lb.probeReachesSidecar ? {
      message: "with instance targets and externalTrafficPolicy Local the NLB probes kube-proxy's healthCheckNodePort, which answers from pod readiness, not the sidecar's LB endpoint: the LB signal of this plan never reaches the NLB",
      remediation: 'use targetType ip and point the health check (aws-load-balancer-healthcheck-port/-path) at the sidecar',
      expectedLoss: 'unknown',
    } : undefined),
  },
  {
    id: 'nlb-deregistration-delay-short',
    severity: 'warning',
    field: 'spec.loadBalancer.deregistrationDelay',
    check: ({ timings: t }, lb) => (lb.deregistrationConnectionTermination && lb.deregistrationDelay < t.drainTimeoutSeconds ? {
      message: `deregistration delay ${lb.deregistrationDelay}s is shorter than the drain timeout ${t.drainTimeoutSeconds}s and ends with connection termination: long requests are reset`,
      remediation: `set deregistrationDelay to at least ${t.drainTimeoutSeconds}s`,
      expectedLoss: 'reset-sessions',
    } : undefined),
  },
];

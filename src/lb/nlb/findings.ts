import { setAt, specPath } from '../../core/fix';
import type { VendorRule } from '../../model/lb-vendor';
import type { NlbLb } from './schema';

export const nlbFindings: VendorRule<NlbLb>[] = [
  {
    id: 'nlb-instance-probe-bypasses-sidecar',
    severity: 'error',
    field: 'spec.loadBalancer.targetType',
    check: ({ lb }) =>
      !lb.probeReachesSidecar
        ? {
            message:
              "with instance targets and externalTrafficPolicy Local the NLB probes kube-proxy's healthCheckNodePort, which answers from pod readiness, not the sidecar's LB endpoint: the LB signal of this plan never reaches the NLB",
            remediation: 'use targetType ip and point the health check (aws-load-balancer-healthcheck-port/-path) at the sidecar',
            fixes: [{ description: 'ip targets', edits: [setAt(specPath('spec.loadBalancer.targetType'), 'ip')] }],
            expectedLoss: 'unknown',
          }
        : undefined,
  },
  {
    id: 'nlb-no-readiness-gate',
    severity: 'warning',
    field: 'spec.loadBalancer.podReadinessGate',
    check: ({ timings: t }, lb) =>
      lb.targetType === 'ip' && !lb.podReadinessGate
        ? {
            message: `without the controller's pod readiness gate a new pod counts as available ${t.minReadySeconds}s (minReadySeconds) after it is ready, but a new ip target can take minutes to register (aws-load-balancer-controller#1834): the rollout can take the old pods out while the NLB has no healthy target for the new ones`,
            remediation: 'podReadinessGate: true (the gateway namespace gets the label elbv2.k8s.aws/pod-readiness-gate-inject: enabled)',
            fixes: [{ description: "the controller's pod readiness gate", edits: [setAt(specPath('spec.loadBalancer.podReadinessGate'), true)] }],
            expectedLoss: 'unknown',
          }
        : undefined,
  },
  {
    id: 'nlb-deregistration-delay-short',
    severity: 'warning',
    field: 'spec.loadBalancer.deregistrationDelay',
    // The controller deregisters an ip target when its pod is deleted: the delay runs from the start
    // of the sequence, and with connection termination it ends by resetting what is still open.
    check: ({ timings: t }, lb) =>
      lb.targetType === 'ip' && lb.deregistrationConnectionTermination && lb.deregistrationDelay < t.sequenceSeconds
        ? {
            message: `deregistration delay ${lb.deregistrationDelay}s runs from the pod's deletion and ends with connection termination, but the sequence takes up to ${t.sequenceSeconds}s: requests still running then are reset`,
            remediation: `set deregistrationDelay to at least ${Math.ceil(t.sequenceSeconds)}s, or deregistrationConnectionTermination: false`,
            fixes: [
              {
                description: 'deregistration delay covering the sequence',
                edits: [setAt(specPath('spec.loadBalancer.deregistrationDelay'), Math.ceil(t.sequenceSeconds))],
              },
              {
                description: 'no connection termination at deregistration',
                edits: [setAt(specPath('spec.loadBalancer.deregistrationConnectionTermination'), false)],
              },
            ],
            expectedLoss: 'reset-sessions',
          }
        : undefined,
  },
];

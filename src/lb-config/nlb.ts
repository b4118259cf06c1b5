import type { NlbLb } from '../lb/nlb/schema';
import { NLB_ANNOTATIONS as A } from '../lb/nlb/annotations';
import { nlbNamespaceLabels, nlbServiceAnnotations } from './nlb-service-annotations';
import { header, planned, type LbConfigInput } from './text';

/** Why the plan needs each annotation, by its name (src/lb/nlb/annotations.ts). */
function reasons(input: LbConfigInput, lb: NlbLb): Record<string, string> {
  const { plan } = input;
  return {
    [A.type]: 'the AWS Load Balancer Controller (not the in-tree provider) reads the annotations below',
    [A.targetType]:
      lb.targetType === 'ip'
        ? 'ip targets: the probe reaches the pod, so it can be pointed at the sidecar'
        : 'instance targets: with externalTrafficPolicy Local the probe goes to kube-proxy, not the sidecar (finding nlb-instance-probe-bypasses-sidecar)',
    [A.healthCheckProtocol]: 'an HTTP probe, so the status code is the signal',
    [A.healthCheckPort]: "the sidecar's health port on the pod IP",
    [A.healthCheckPath]: "the sidecar's LB endpoint (/health is readiness and flips later)",
    [A.healthCheckInterval]: `detection ~ ${planned(plan, 'lbDetectSeconds')}; the plan's LB buffer = ${planned(plan, 'lbBufferSeconds')}`,
    [A.unhealthyThreshold]: 'part of the detection time above',
    [A.healthCheckTimeout]: 'a hung probe counts as failed after this',
    [A.healthyThreshold]: 'recovery only: when a new pod takes traffic',
    [A.targetGroupAttributes]: lb.unhealthyConnectionTermination
      ? 'unhealthy targets get their connections reset: health fails only after in-flight reached 0'
      : `connections of an unhealthy target survive, which health-first relies on, for the draining interval: the whole sequence (${planned(plan, 'sequenceSeconds')})`,
  };
}

/**
 * The annotations gracegate puts on the gateway Service (src/lb-config/nlb-service-annotations.ts, the same
 * ones the overlay and the post-renderer apply), each with the plan assumption it serves.
 */
export function renderNlb(lb: NlbLb, input: LbConfigInput): string {
  const why = reasons(input, lb);
  // The annotation lines are long: each reason goes on its own comment line above it.
  const body = Object.entries(nlbServiceAnnotations(lb, input.plan)).flatMap(([name, value]) => {
    // Quote what YAML would read as a number or a boolean: the controller wants strings.
    const text = /^(\d+|true|false)$/.test(value) ? JSON.stringify(value) : value;
    return [`    # ${why[name]}`, `    ${name}: ${text}`];
  });
  const labels = Object.entries(nlbNamespaceLabels(lb)).map(([k, v]) => `${k}=${v}`);
  const gate =
    labels.length === 0
      ? []
      : [
          '',
          "# the controller's pod readiness gate: a new pod turns ready only once its target is healthy, so a rollout cannot outrun target registration (minutes at times: aws-load-balancer-controller#1834); synth's manifests.yaml carries the same label",
          `# kubectl label namespace ${input.plan.gateway.namespace} ${labels.join(' ')}`,
        ];
  return [...header('AWS NLB (AWS Load Balancer Controller Service annotations)', input), 'metadata:', '  annotations:', ...body, ...gate, ''].join('\n');
}

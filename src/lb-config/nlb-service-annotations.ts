import { Duration } from '../core/duration';
import { nlbDefaults } from '../lb/nlb/behaviour';
import type { Plan } from '../plan/plan-gateway';
import type { NlbLb } from '../lb/nlb/schema';
import { PATHS } from '../contract/hc';
import { NLB_ANNOTATIONS as A, NLB_TARGET_GROUP_ATTRIBUTES as T, READINESS_GATE_LABEL } from '../lb/nlb/annotations';

/** Whole seconds, as the controller wants them; fractions round up so a wait is never shortened. */
const seconds = (value: number): string => String(Duration.seconds(value).wholeSecondsUp);

/**
 * The gateway namespace's labels: the controller's pod readiness gate, for ip targets (with
 * instance targets the node is the target and the gate does not apply). The gate holds a new pod
 * unready until its target is healthy, so a rollout waits for registration (minutes at times,
 * aws-load-balancer-controller#1834), not only for minReadySeconds.
 */
export function nlbNamespaceLabels(lb: NlbLb): Record<string, string> {
  return lb.targetType === 'ip' && lb.podReadinessGate ? { [READINESS_GATE_LABEL]: 'enabled' } : {};
}

/**
 * AWS Load Balancer Controller annotations for the gateway's LoadBalancer Service (docs/facts.md §3):
 * point the NLB's health check at the sidecar's LB endpoint and write the target group attributes
 * the plan assumed. Values are strings, as the controller requires.
 * The one source of these annotations: the overlays and the post-renderer apply them, and
 * `gracegate lb-config` prints them for the LB team.
 */
export function nlbServiceAnnotations(lb: NlbLb, plan: Plan): Record<string, string> {
  const { unhealthyThreshold, healthCheckTimeout } = nlbDefaults(lb);
  // Only ip targets let the probe reach the pod, and so the sidecar. With instance targets and
  // externalTrafficPolicy Local the controller probes kube-proxy's healthCheckNodePort, which
  // answers from readiness (the plan's finding nlb-instance-probe-bypasses-sidecar): pointing a
  // path at the sidecar there would only pretend otherwise.
  const probe: Record<string, string> =
    lb.targetType === 'ip' ? { [A.healthCheckProtocol]: 'HTTP', [A.healthCheckPort]: String(plan.health.port), [A.healthCheckPath]: PATHS.lb } : {};
  return {
    // Without `external` the in-tree cloud provider, not the controller, reconciles the Service and
    // ignores the target group attributes below.
    [A.type]: 'external',
    [A.targetType]: lb.targetType,
    ...probe,
    [A.healthCheckInterval]: seconds(lb.healthCheckInterval),
    [A.unhealthyThreshold]: String(unhealthyThreshold),
    [A.healthCheckTimeout]: seconds(healthCheckTimeout),
    [A.healthyThreshold]: String(lb.healthyThreshold),
    [A.targetGroupAttributes]: [
      `${T.deregistrationDelay}=${seconds(lb.deregistrationDelay)}`,
      `${T.deregistrationConnectionTermination}=${lb.deregistrationConnectionTermination}`,
      `${T.unhealthyConnectionTermination}=${lb.unhealthyConnectionTermination}`,
      // Without termination, an unhealthy target keeps its connections only for this interval, and
      // its default is 0 (AWS TargetGroupAttribute; the controller's docs set it beside
      // connection_termination.enabled=false). The target turns unhealthy no earlier than the
      // sequence starts, and in-flight reaches zero by its end: the whole sequence covers the drain.
      ...(lb.unhealthyConnectionTermination ? [] : [`${T.unhealthyDrainingInterval}=${seconds(plan.timings.sequenceSeconds)}`]),
    ].join(','),
  };
}

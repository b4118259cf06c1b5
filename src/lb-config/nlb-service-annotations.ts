import { Duration } from '../core/duration';
import { nlbDefaults } from '../lb/nlb/behaviour';
import type { Plan } from '../plan/plan-gateway';
import type { NlbLb } from '../lb/nlb/schema';
import { PATHS } from '../contract/hc';

/** The prefix of every AWS Load Balancer Controller Service annotation. */
export const NLB_ANNOTATION_PREFIX = 'service.beta.kubernetes.io/aws-load-balancer-';
const A = NLB_ANNOTATION_PREFIX;

/** Whole seconds, as the controller wants them; fractions round up so a wait is never shortened. */
const seconds = (value: number): string => String(Duration.seconds(value).wholeSecondsUp);

/** The namespace label that makes the controller inject its pod readiness gate (docs/deploy/pod_readiness_gate.md). */
export const READINESS_GATE_LABEL = 'elbv2.k8s.aws/pod-readiness-gate-inject';

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
    lb.targetType === 'ip'
      ? { [`${A}healthcheck-protocol`]: 'HTTP', [`${A}healthcheck-port`]: String(plan.health.port), [`${A}healthcheck-path`]: PATHS.lb }
      : {};
  return {
    // Without `external` the in-tree cloud provider, not the controller, reconciles the Service and
    // ignores the target group attributes below.
    [`${A}type`]: 'external',
    [`${A}nlb-target-type`]: lb.targetType,
    ...probe,
    [`${A}healthcheck-interval`]: seconds(lb.healthCheckInterval),
    [`${A}healthcheck-unhealthy-threshold`]: String(unhealthyThreshold),
    [`${A}healthcheck-timeout`]: seconds(healthCheckTimeout),
    [`${A}healthcheck-healthy-threshold`]: String(lb.healthyThreshold),
    [`${A}target-group-attributes`]: [
      `deregistration_delay.timeout_seconds=${seconds(lb.deregistrationDelay)}`,
      `deregistration_delay.connection_termination.enabled=${lb.deregistrationConnectionTermination}`,
      `target_health_state.unhealthy.connection_termination.enabled=${lb.unhealthyConnectionTermination}`,
      // Without termination, an unhealthy target keeps its connections only for this interval, and
      // its default is 0 (AWS TargetGroupAttribute; the controller's docs set it beside
      // connection_termination.enabled=false). The target turns unhealthy no earlier than the
      // sequence starts, and in-flight reaches zero by its end: the whole sequence covers the drain.
      ...(lb.unhealthyConnectionTermination ? [] : [`target_health_state.unhealthy.draining_interval_seconds=${seconds(plan.timings.sequenceSeconds)}`]),
    ].join(','),
  };
}

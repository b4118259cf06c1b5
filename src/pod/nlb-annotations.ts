import { nlbDefaults } from '../plan/lb/nlb';
import type { GatewaySpec } from '../spec/gateway-spec';
import { PATHS } from './names';

const A = 'service.beta.kubernetes.io/aws-load-balancer-';

/**
 * AWS Load Balancer Controller annotations for the gateway's LoadBalancer Service (FACTS.md §3):
 * point the NLB's health check at the sidecar's LB endpoint and write the target group attributes
 * the plan assumed. Empty for every other LB model. Values are strings, as the controller requires.
 */
export function nlbServiceAnnotations(spec: GatewaySpec): Record<string, string> {
  const lb = spec.spec.loadBalancer;
  if (lb.model !== 'nlb') return {};
  const { health } = spec.spec;
  const { unhealthyThreshold, healthCheckTimeout } = nlbDefaults(lb);
  // ip targets: the NLB probes the pod IP, so the sidecar's port. instance targets: the node, so the
  // health Service's fixed NodePort when there is one (the plan flags instance targets anyway).
  const probePort = lb.targetType === 'ip'
    ? String(health.port)
    : health.exposure === 'nodePort' && health.nodePort !== undefined ? String(health.nodePort) : undefined;
  return {
    // Without `external` the in-tree cloud provider, not the controller, reconciles the Service and
    // ignores the target group attributes below.
    [`${A}type`]: 'external',
    [`${A}nlb-target-type`]: lb.targetType,
    [`${A}healthcheck-protocol`]: 'HTTP',
    ...(probePort !== undefined ? { [`${A}healthcheck-port`]: probePort } : {}),
    [`${A}healthcheck-path`]: PATHS.lb,
    [`${A}healthcheck-interval`]: String(lb.healthCheckInterval),
    [`${A}healthcheck-timeout`]: String(healthCheckTimeout),
    [`${A}healthcheck-healthy-threshold`]: String(lb.healthyThreshold),
    [`${A}healthcheck-unhealthy-threshold`]: String(unhealthyThreshold),
    [`${A}target-group-attributes`]: [
      `deregistration_delay.timeout_seconds=${lb.deregistrationDelay}`,
      `deregistration_delay.connection_termination.enabled=${lb.deregistrationConnectionTermination}`,
      `target_health_state.unhealthy.connection_termination.enabled=${lb.unhealthyConnectionTermination}`,
    ].join(','),
  };
}

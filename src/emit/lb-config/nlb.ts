import type { z } from 'zod';
import type { nlbSchema } from '../../spec/lb-models';
import { nlbDefaults } from '../../plan/lb/nlb';
import { header, healthProbePort, LB_HEALTH_PATH, wholeSeconds, type LbConfigInput, type Line } from './common';

type NlbLb = z.output<typeof nlbSchema>;

const A = 'service.beta.kubernetes.io/aws-load-balancer-';

/**
 * Annotations for the gateway Service, read by the AWS Load Balancer Controller (FACTS.md §3):
 * target type, the health check on the sidecar, and the target-group attributes deciding what
 * happens to live connections of an unhealthy or deregistered target.
 */
export function renderNlb(input: LbConfigInput): string {
  const { plan, spec } = input;
  const lb = spec.spec.loadBalancer as NlbLb;
  const { unhealthyThreshold, healthCheckTimeout } = nlbDefaults(lb);
  const q = (v: string | number): string => JSON.stringify(String(v));

  const lines: Line[] = [
    { text: `${A}type: external`, why: 'the AWS Load Balancer Controller (not the in-tree provider) reads the annotations below' },
    { text: `${A}nlb-target-type: ${lb.targetType}`, why: lb.targetType === 'ip' ? "ip targets: the probe reaches the pod, so it can be pointed at the sidecar" : 'instance targets: with externalTrafficPolicy Local the probe goes to kube-proxy, not the sidecar (finding nlb-instance-probe-bypasses-sidecar)' },
  ];
  if (plan.loadBalancer.probeReachesSidecar) {
    lines.push({ text: `${A}healthcheck-protocol: http`, why: 'an HTTP probe, so the status code is the signal' });
    lines.push({ text: `${A}healthcheck-port: ${q(healthProbePort(spec) ?? spec.spec.health.port)}`, why: "the sidecar's health port on the pod IP" });
    lines.push({ text: `${A}healthcheck-path: ${LB_HEALTH_PATH}`, why: "the sidecar's LB endpoint (/health is readiness and flips later)" });
  }
  lines.push({ text: `${A}healthcheck-interval: ${q(wholeSeconds(lb.healthCheckInterval))}`, why: `detection ~ interval x unhealthy threshold = ${plan.loadBalancer.lbDetectSeconds}s, plus ${lb.propagationDelay}s before new connections stop: the plan's LB buffer` });
  lines.push({ text: `${A}healthcheck-unhealthy-threshold: ${q(unhealthyThreshold)}`, why: 'part of the detection time above' });
  lines.push({ text: `${A}healthcheck-timeout: ${q(wholeSeconds(healthCheckTimeout))}`, why: 'a hung probe counts as failed after this' });
  lines.push({ text: `${A}healthcheck-healthy-threshold: ${q(lb.healthyThreshold)}`, why: 'recovery only: when a new pod takes traffic' });
  const attrs = [
    `deregistration_delay.timeout_seconds=${wholeSeconds(lb.deregistrationDelay)}`,
    `deregistration_delay.connection_termination.enabled=${lb.deregistrationConnectionTermination}`,
    `target_health_state.unhealthy.connection_termination.enabled=${lb.unhealthyConnectionTermination}`,
  ].join(',');
  lines.push({
    text: `${A}target-group-attributes: ${attrs}`,
    why: lb.unhealthyConnectionTermination
      ? 'unhealthy targets get their connections reset: health fails only after in-flight reached 0'
      : 'connections of an unhealthy target survive, which health-first relies on',
  });
  // The annotation lines are long: each reason goes on its own comment line above it.
  const body = lines.flatMap((l) => [`    # ${l.why}`, `    ${l.text}`]);
  return [...header('AWS NLB (AWS Load Balancer Controller Service annotations)', input), 'metadata:', '  annotations:', ...body, ''].join('\n');
}

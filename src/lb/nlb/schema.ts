import { z } from 'zod';
import { duration, vendorCount, vendorDuration } from '../../model/spec-fields';

/** The target group's health check, as Elastic Load Balancing takes it: whole seconds in a range (API reference, CreateTargetGroup). */
const healthCheckSeconds = (field: string, min: number, max: number) =>
  vendorDuration(
    (s) => Number.isInteger(s) && s >= min && s <= max,
    (s) => `AWS refuses ${field} ${s}: it is a whole number of seconds from ${min} to ${max} (Elastic Load Balancing API reference, CreateTargetGroup)`,
  );
const thresholdCount = (field: string) =>
  vendorCount(2, 10, (n) => `AWS refuses ${field} ${n}: the range is 2 to 10 (Elastic Load Balancing API reference, CreateTargetGroup)`);

/** AWS NLB driven by the AWS Load Balancer Controller (annotations on the gateway Service). */
export const nlbSchema = z
  .strictObject({
    model: z.literal('nlb'),
    /** @default instance (the controller's default for NLB target type). */
    targetType: z.enum(['ip', 'instance']).default('instance').describe('aws-load-balancer-nlb-target-type; controller default instance'),
    /** @default 10s (controller default). */
    healthCheckInterval: healthCheckSeconds('HealthCheckIntervalSeconds', 5, 300)
      .default(10)
      .describe('aws-load-balancer-healthcheck-interval; controller default 10 s'),
    /** @default 10s, or 6s for instance targets with externalTrafficPolicy Local (controller defaults). */
    healthCheckTimeout: healthCheckSeconds('HealthCheckTimeoutSeconds', 2, 120)
      .optional()
      .describe('aws-load-balancer-healthcheck-timeout; controller default 10 s (6 s for instance + Local)'),
    /** @default 3, or 2 for instance targets with externalTrafficPolicy Local (controller defaults). */
    unhealthyThreshold: thresholdCount('UnhealthyThresholdCount')
      .optional()
      .describe('aws-load-balancer-healthcheck-unhealthy-threshold; controller default 3 (2 for instance + Local)'),
    /** @default 3 (controller default). */
    healthyThreshold: thresholdCount('HealthyThresholdCount').default(3).describe('aws-load-balancer-healthcheck-healthy-threshold; controller default 3'),
    /** Seconds a deregistering target keeps its connections. @default 300s (AWS default). */
    deregistrationDelay: duration.default(300).describe('target group deregistration_delay.timeout_seconds; AWS default 300 s'),
    /** @default false: connections of a deregistered target are not reset at the end of the delay. */
    deregistrationConnectionTermination: z.boolean().default(false).describe('deregistration_delay.connection_termination.enabled; AWS default false'),
    /** @default true: the NLB resets connections to an unhealthy target (RST on DOWN). */
    unhealthyConnectionTermination: z
      .boolean()
      .default(true)
      .describe('target_health_state.unhealthy.connection_termination.enabled; AWS default true (RST on DOWN)'),
    /**
     * Extra seconds after the target is marked unhealthy before new connections stop arriving.
     * @default 40s: users measure 30-40 s (aws/containers-roadmap#470).
     */
    propagationDelay: duration.default(40).describe('seconds between unhealthy and no more new connections; 40 s from aws/containers-roadmap#470'),
    /**
     * ip targets: seconds from the pod's deletion until its deregistered target gets no new
     * connections. The controller deregisters a terminating pod's target at once, and users measure
     * about 2 minutes before new connections stop, whatever the deregistration delay
     * (aws-load-balancer-controller#2366, aws/containers-roadmap#470). @default 120s.
     */
    /**
     * ip targets: label the gateway's namespace `elbv2.k8s.aws/pod-readiness-gate-inject: enabled`,
     * so the controller keeps each new pod unready until its target is healthy and a rollout cannot
     * outrun target registration (aws-load-balancer-controller#1834). @default true.
     */
    podReadinessGate: z
      .boolean()
      .default(true)
      .describe("ip targets: use the controller's pod readiness gate (namespace label elbv2.k8s.aws/pod-readiness-gate-inject); default true"),
    deregistrationLag: duration
      .default(120)
      .describe(
        'ip targets: seconds from pod deletion until the deregistered target gets no new connections; ~2 min measured (aws-load-balancer-controller#2366)',
      ),
  })
  .superRefine((lb, ctx) => {
    if (lb.healthCheckTimeout !== undefined && lb.healthCheckTimeout > lb.healthCheckInterval) {
      ctx.addIssue({
        code: 'custom',
        path: ['healthCheckTimeout'],
        message: `NLB healthCheckTimeout (${lb.healthCheckTimeout}s) must not exceed healthCheckInterval (${lb.healthCheckInterval}s)`,
      });
    }
  });

export type NlbLb = z.output<typeof nlbSchema>;

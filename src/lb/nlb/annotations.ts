/**
 * The AWS Load Balancer Controller's Service annotations, the one place their names live:
 * lb-config writes them for a plan (src/lb-config/nlb-service-annotations.ts), lint reads them back
 * from manifests (src/lint/lb-probe-nlb.ts). Names from the controller's documentation
 * (docs/guide/service/annotations.md of kubernetes-sigs/aws-load-balancer-controller).
 */

/** The prefix of every AWS Load Balancer Controller Service annotation. */
const NLB_ANNOTATION_PREFIX = 'service.beta.kubernetes.io/aws-load-balancer-';
const A = NLB_ANNOTATION_PREFIX;

/** Each annotation gracegate writes or reads, by what it sets. */
export const NLB_ANNOTATIONS = {
  /** `external`: the controller, not the in-tree provider, reconciles the Service; `nlb` / `nlb-ip`: the in-tree provider's names. */
  type: `${A}type`,
  targetType: `${A}nlb-target-type`,
  healthCheckProtocol: `${A}healthcheck-protocol`,
  healthCheckPort: `${A}healthcheck-port`,
  healthCheckPath: `${A}healthcheck-path`,
  healthCheckInterval: `${A}healthcheck-interval`,
  unhealthyThreshold: `${A}healthcheck-unhealthy-threshold`,
  healthCheckTimeout: `${A}healthcheck-timeout`,
  healthyThreshold: `${A}healthcheck-healthy-threshold`,
  targetGroupAttributes: `${A}target-group-attributes`,
} as const;

/** The target group attributes inside `target-group-attributes` (key=value, comma-separated; AWS TargetGroupAttribute). */
export const NLB_TARGET_GROUP_ATTRIBUTES = {
  deregistrationDelay: 'deregistration_delay.timeout_seconds',
  deregistrationConnectionTermination: 'deregistration_delay.connection_termination.enabled',
  unhealthyConnectionTermination: 'target_health_state.unhealthy.connection_termination.enabled',
  unhealthyDrainingInterval: 'target_health_state.unhealthy.draining_interval_seconds',
} as const;

/** The namespace label that makes the controller inject its pod readiness gate (docs/deploy/pod_readiness_gate.md). */
export const READINESS_GATE_LABEL = 'elbv2.k8s.aws/pod-readiness-gate-inject';

type Annotations = Readonly<Record<string, unknown>>;

/**
 * The NLB target type the AWS controllers give a LoadBalancer Service from its annotations: the
 * in-tree provider's `nlb` (instance) and `nlb-ip`, or the controller's `external` with its target
 * type (default instance); undefined where the annotations name no NLB.
 */
export function nlbTargetTypeOf(annotations: Annotations): 'ip' | 'instance' | undefined {
  const type = annotations[NLB_ANNOTATIONS.type];
  if (type === 'nlb') return 'instance';
  if (type === 'nlb-ip') return 'ip';
  if (type === 'external') return annotations[NLB_ANNOTATIONS.targetType] === 'ip' ? 'ip' : 'instance';
  return undefined;
}

/**
 * The spec's `loadBalancer` block the annotations describe (model nlb): what they leave out takes
 * the vendor's defaults when the block is parsed. A value that is no whole number or boolean is left
 * out, so the schema's default stands for it.
 */
export function nlbBlockOf(annotations: Annotations, targetType: 'ip' | 'instance'): Record<string, unknown> {
  const num = (key: string): number | undefined => {
    const v = annotations[key];
    return typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;
  };
  const attributes = String(annotations[NLB_ANNOTATIONS.targetGroupAttributes] ?? '');
  const attribute = (k: string): string | undefined => new RegExp(`(?:^|,)\\s*${k.replace(/\./g, '\\.')}=([^,]*)`).exec(attributes)?.[1]?.trim();
  const block: Record<string, unknown> = { model: 'nlb', targetType };
  const put = (field: string, v: unknown) => {
    if (v !== undefined) block[field] = v;
  };
  put('healthCheckInterval', num(NLB_ANNOTATIONS.healthCheckInterval));
  put('healthCheckTimeout', num(NLB_ANNOTATIONS.healthCheckTimeout));
  put('unhealthyThreshold', num(NLB_ANNOTATIONS.unhealthyThreshold));
  put('healthyThreshold', num(NLB_ANNOTATIONS.healthyThreshold));
  const delay = attribute(NLB_TARGET_GROUP_ATTRIBUTES.deregistrationDelay);
  put('deregistrationDelay', delay !== undefined && /^\d+$/.test(delay) ? Number(delay) : undefined);
  const rst = attribute(NLB_TARGET_GROUP_ATTRIBUTES.unhealthyConnectionTermination);
  put('unhealthyConnectionTermination', rst === 'true' ? true : rst === 'false' ? false : undefined);
  return block;
}

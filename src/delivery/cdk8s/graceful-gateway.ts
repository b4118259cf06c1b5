import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { blockingFindings, type FailOn } from '../../model/finding';
import { planGateway, type Plan } from '../../plan/plan-gateway';
import { applyPodChanges } from '../../pod/apply';
import { autoscalerObject, networkPolicyObject, streamLimitsObject } from '../../pod/extra-objects';
import { podChanges, type PodChanges } from '../../pod/pod-changes';
import type { GatewaySpecInput } from '../../schema/gateway-spec';
import { resolveGatewaySpec, type ResolvedSpec } from '../../schema/parse-spec';
import { apiObjectOf } from './api-object';
import { GatewayDisruptionBudget } from './gateway-disruption-budget';
import { DEFAULT_GATEWAY_PORTS, baseGatewayDeployment, gatewayServiceObject, serviceAccountObject, type GatewayServicePort } from './gateway-workload';
import { HcConfigMap } from './hc-config-map';
import { HealthService } from './health-service';

export interface GracefulGatewayProps {
  /**
   * The GracefulGateway spec, as written in `gateway.yaml` (validated here; a bad spec throws
   * listing every problem), or already resolved by `parseGatewaySpec`/`resolveGatewaySpec`.
   */
  readonly spec: GatewaySpecInput | ResolvedSpec;
  /**
   * The gracegate image running the hc sidecar.
   * @default ghcr.io/gracegate/gracegate:<package version> — the sidecar must speak the same config
   * version as the CLI that wrote it.
   */
  readonly image?: string;
  /**
   * Type of the gateway's own Service.
   * @default LoadBalancer — as istio/gateway: the gateway sits behind an LB outside the cluster.
   */
  readonly serviceType?: 'LoadBalancer' | 'NodePort' | 'ClusterIP';
  /**
   * Ports of the gateway's own Service.
   * @default status-port 15021, http2 80, https 443 — istio/gateway's defaults.
   */
  readonly ports?: readonly GatewayServicePort[];
  /**
   * Plan findings at or above this severity fail synthesis (through `node.addValidation`).
   * @default error — an error finding means the plan cannot be lossless (e.g. the rollout deadlock
   * of kubernetes#116891), so nothing should be deployed until it is fixed.
   */
  readonly failOn?: FailOn;
}

function isResolved(spec: GracefulGatewayProps['spec']): spec is ResolvedSpec {
  return typeof spec === 'object' && spec !== null && 'given' in spec && 'spec' in spec;
}

/**
 * A complete Istio ingress gateway that leaves service without losing a request: the gateway
 * Deployment (istio-proxy, injected by Istio) with the hc sidecar and the proxy hold, its
 * ServiceAccount and Service, the hc ConfigMap, the health Service, the PodDisruptionBudget and,
 * when the spec autoscales, the HorizontalPodAutoscaler; with a stream lifetime bound, the
 * EnvoyFilter that sets it.
 * Every field comes from the plan through the pod changes, like the values overlays and the
 * post-renderer.
 */
export class GracefulGateway extends Construct {
  readonly plan: Plan;
  readonly changes: PodChanges;
  readonly deployment: ApiObject;
  readonly service: ApiObject;
  readonly configMap: HcConfigMap;
  readonly healthService?: HealthService;
  readonly disruptionBudget?: GatewayDisruptionBudget;
  /** The HorizontalPodAutoscaler, when the spec autoscales (spec.autoscaling); the Deployment then has no replicas. */
  readonly autoscaler?: ApiObject;
  /** The EnvoyFilter with the stream limits, when spec.traffic.longLived bounds stream lifetime. */
  readonly streamLimits?: ApiObject;
  /** The NetworkPolicy over the sidecar's ports (unless spec.networkPolicy.enabled is false). */
  readonly networkPolicy?: ApiObject;

  constructor(scope: Construct, id: string, props: GracefulGatewayProps) {
    super(scope, id);
    const resolved = isResolved(props.spec) ? props.spec : resolveGatewaySpec(props.spec);
    this.plan = planGateway(resolved);
    this.changes = podChanges(this.plan, props.image !== undefined ? { image: props.image } : {});

    const serviceAccount = this.changes.gateway.name;
    apiObjectOf(this, 'ServiceAccount', serviceAccountObject(this.changes, serviceAccount));
    this.deployment = apiObjectOf(this, 'Deployment', applyPodChanges(baseGatewayDeployment(this.changes, serviceAccount), this.changes));
    const hpa = autoscalerObject(this.changes, this.changes.gateway.name);
    if (hpa) this.autoscaler = apiObjectOf(this, 'HorizontalPodAutoscaler', hpa);
    this.service = apiObjectOf(this, 'Service', gatewayServiceObject(this.changes, props.serviceType ?? 'LoadBalancer', props.ports ?? DEFAULT_GATEWAY_PORTS));
    this.configMap = new HcConfigMap(this, 'HcConfig', { changes: this.changes });
    if (this.changes.healthService) this.healthService = new HealthService(this, 'HealthService', { changes: this.changes });
    if (this.changes.disruptionBudget) this.disruptionBudget = new GatewayDisruptionBudget(this, 'DisruptionBudget', { changes: this.changes });
    const limits = streamLimitsObject(this.changes);
    if (limits) this.streamLimits = apiObjectOf(this, 'StreamLimits', limits);
    const policy = networkPolicyObject(this.changes);
    if (policy) this.networkPolicy = apiObjectOf(this, 'NetworkPolicy', policy);

    this.node.addValidation({
      validate: () =>
        blockingFindings(this.plan.findings, props.failOn ?? 'error').map((f) => `${f.severity} ${f.id} (${f.field}): ${f.message}; fix: ${f.remediation}`),
    });
  }
}

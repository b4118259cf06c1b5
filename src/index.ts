/**
 * gracegate as a library: the spec, the planner, the pod changes, the cdk8s constructs and the
 * outputs, exactly the surface docs/delivery.md ("cdk8s as a library") lists. Loading this entry
 * loads cdk8s (for the constructs).
 */
export { gatewaySpecSchema, type GatewaySpec, type GatewaySpecInput } from './schema/gateway-spec';
export { parseGatewaySpec, resolveGatewaySpec, SpecError, type ResolvedSpec, type SpecProblem } from './schema/parse-spec';
export { workloadSpecSchema, type WorkloadSpec, type WorkloadSpecInput } from './schema/workload-spec';
export { parseWorkloadSpec, resolveWorkloadSpec, type ResolvedWorkloadSpec } from './schema/spec-kinds';
export { planWorkload, type WorkloadPlan } from './plan/workload/plan-workload';
export type { WorkloadTimings } from './plan/workload/timings';
export { workloadChanges, type WorkloadChanges } from './pod/workload/pod-changes';
export { applyWorkloadChanges } from './pod/workload/apply';
export { GracefulWorkload, type GracefulWorkloadOptions, type KplusWorkload } from './delivery/library';
export { GracegateError, type Problem } from './core/errors';
export { planGateway, PLAN_API_VERSION, type Plan } from './plan/plan-gateway';
export { blockingFindings, type Finding, type Severity, type FailOn } from './model/finding';
export type { Sequence } from './plan/sequence';
export type { Timings, TimingDerivations } from './plan/timings';
export type { Derived } from './model/derived';
export { applyFix, applyFixToYaml, describeFix, type Fix, type FixEdit, type FixPath } from './core/fix';
export { podChanges, type PodChanges, type PodChangesOptions } from './pod/pod-changes';
export { applyPodChanges, type ApplyOptions } from './pod/apply';
export { extraObjects } from './pod/extra-objects';
export type { K8sObject } from './pod/k8s';
export {
  GracefulGateway,
  HcSidecar,
  HcConfigMap,
  HealthService,
  GatewayDisruptionBudget,
  type GracefulGatewayProps,
  type HcSidecarProps,
  type HcConfigMapProps,
  type HealthServiceProps,
  type GatewayDisruptionBudgetProps,
} from './delivery/library';
export { valuesOverlay, valuesOverlayYaml } from './delivery/library';
export { renderLbConfig, type LbConfigInput, type ServerAddress } from './lb-config';
export { renderPlanMarkdown } from './emit/plan-markdown';
export { containerdFiles } from './emit/containerd';

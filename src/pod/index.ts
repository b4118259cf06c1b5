/**
 * Pod changes: what a plan requires of the gateway pod and its neighbours, as plain data, decided
 * once. The contract between the planner and every delivery path:
 *
 * - `podChanges(plan, {image})` → `PodChanges`: the hc sidecar (full container JSON), the
 *   istio-proxy hold, volumes, grace period, strategy, anti-affinity, pod annotations, the hc
 *   config, the health Service / PDB data and the gateway Service annotations (NLB).
 * - `extraObjects(changes)` → the ConfigMap, health Service, PDB, stream limits' EnvoyFilter and NetworkPolicy as
 *   Kubernetes JSON.
 * - `applyPodChanges(workload, changes)` → a rendered Deployment with the changes in it.
 *
 * Nothing here loads cdk8s (the CLI paths must stay fast); only the constructs (`src/delivery/cdk8s/`) do.
 */
export * from './names';
export * from './k8s';
export { hcConfigFor, checkHcConfig, HcConfigRejectedError, WITNESS_WINDOW_SECONDS, ENVOY_ADMIN_TIMEOUT_SECONDS } from './hc-config';
export {
  podChanges,
  hcConfigHash,
  PodChangesError,
  DEFAULT_IMAGE,
  HC_RESOURCES,
  HC_RUN_AS,
  HC_STATE_SIZE_LIMIT,
  type PodChanges,
  type PodChangesOptions,
  type HealthServiceData,
  type AutoscalerData,
  type GatewayApiData,
  type StreamLimitsData,
} from './pod-changes';
export {
  extraObjects,
  hcConfigMapObject,
  healthServiceObject,
  disruptionBudgetObject,
  autoscalerObject,
  streamLimitsObject,
  networkPolicyObject,
} from './extra-objects';
export { applyPodChanges, applyAutoscaler, ApplyPodChangesError, type ApplyOptions } from './apply';

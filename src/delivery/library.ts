/**
 * The delivery paths' part of the library (src/index.ts, docs/delivery.md "cdk8s as a library"):
 * the cdk8s constructs and the values overlay. Loading it loads cdk8s.
 */
export {
  GracefulGateway,
  HcSidecar,
  HcConfigMap,
  HealthService,
  GatewayDisruptionBudget,
  GracefulWorkload,
  type GracefulGatewayProps,
  type HcSidecarProps,
  type HcConfigMapProps,
  type HealthServiceProps,
  type GatewayDisruptionBudgetProps,
  type GracefulWorkloadOptions,
  type KplusWorkload,
} from './cdk8s/constructs';
export { valuesOverlay, valuesOverlayYaml } from './helm-values/overlay';

/**
 * cdk8s constructs: projections of the pod changes into a cdk8s app. The only modules that load
 * cdk8s. The gateway's objects are plain ApiObjects (see api-object.ts for why not cdk8s-plus-28);
 * GracefulWorkload works on the user's own cdk8s-plus-28 workload.
 */
export { GracefulGateway, type GracefulGatewayProps } from './graceful-gateway';
export { HcSidecar, type HcSidecarProps } from './hc-sidecar';
export { HcConfigMap, type HcConfigMapProps } from './hc-config-map';
export { HealthService, type HealthServiceProps } from './health-service';
export { GatewayDisruptionBudget, type GatewayDisruptionBudgetProps } from './gateway-disruption-budget';
export { DEFAULT_GATEWAY_PORTS, baseGatewayDeployment, gatewayServiceObject, type GatewayServicePort } from './gateway-workload';
export { GracefulWorkload, type GracefulWorkloadOptions, type KplusWorkload } from './graceful-workload';

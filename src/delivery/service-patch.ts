/**
 * What the Kustomize component and the Gateway API parameters change on the gateway's own Service:
 * the LB's annotations (model nlb), the traffic policy and the health port, as a strategic merge
 * (ports are keyed by port, so the health port lands beside the chart's or the listeners'). One
 * answer for both, so that the two paths cannot put different Services in front of the same pods.
 */
import { asObject } from '../core/json';
import { HC_HEALTH_PORT_NAME } from '../pod/names';
import type { GatewayServicePortData, PodChanges } from '../pod/pod-changes';

/** One port of the gateway's own Service. */
export type GatewayServicePort = { name: string; port: number; targetPort: number; protocol?: 'TCP' | 'UDP' };

/**
 * The ports istio/gateway's values give its Service (1.26.8 to 1.31; the in-house chart in charts/
 * mirrors them): the status port, HTTP and HTTPS, each TCP. The cdk8s GracefulGateway's default, and
 * what the chart's `service.ports` value restates before the health port (Helm replaces a list).
 */
export const DEFAULT_GATEWAY_PORTS: readonly GatewayServicePort[] = [
  { name: 'status-port', port: 15021, targetPort: 15021 },
  { name: 'http2', port: 80, targetPort: 80 },
  { name: 'https', port: 443, targetPort: 443 },
];

export type GatewayServicePatch = {
  metadata?: { annotations: Record<string, string> };
  spec?: { externalTrafficPolicy?: string; ports?: Array<Record<string, unknown>> };
};

/** The patch, or null when the plan changes nothing on the gateway's Service. */
export function gatewayServicePatch(changes: PodChanges): GatewayServicePatch | null {
  const annotations = changes.gatewayServiceAnnotations;
  const policy = changes.gatewayServiceTrafficPolicy;
  const port = changes.gatewayServiceHealthPort;
  if (Object.keys(annotations).length === 0 && !policy && !port) return null;
  const spec = { ...(policy ? { externalTrafficPolicy: policy } : {}), ...(port ? { ports: [{ ...port }] } : {}) };
  return {
    ...(Object.keys(annotations).length > 0 ? { metadata: { annotations: { ...annotations } } } : {}),
    ...(Object.keys(spec).length > 0 ? { spec } : {}),
  };
}

/**
 * A gateway Service's ports with the plan's health port on it: any port named hc-health dropped
 * (an earlier run's, or one the plan no longer puts there) and `port`, where given, appended last.
 */
export function withHealthPort<P>(ports: readonly P[], port: GatewayServicePortData | null): Array<P | GatewayServicePortData> {
  return [...ports.filter((p) => asObject(p).name !== HC_HEALTH_PORT_NAME), ...(port ? [{ ...port }] : [])];
}

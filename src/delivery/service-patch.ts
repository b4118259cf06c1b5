/**
 * What the Kustomize component and the Gateway API parameters change on the gateway's own Service:
 * the LB's annotations (model nlb), the traffic policy and the health port, as a strategic merge
 * (ports are keyed by port, so the health port lands beside the chart's or the listeners'). One
 * answer for both, so that the two paths cannot put different Services in front of the same pods.
 */
import type { PodChanges } from '../pod/pod-changes';

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

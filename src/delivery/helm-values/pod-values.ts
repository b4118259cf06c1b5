import type { AutoscalerData, PodChanges } from '../../pod/pod-changes';
import { DEFAULT_GATEWAY_PORTS, gatewayServicePatch } from '../service-patch';

/**
 * The chart's HPA values (istio/gateway's `autoscaling` keys; the in-house chart mirrors them):
 * kept on, with the plan's range, and the spec's target and behaviour where it gives them (else the
 * chart's own values stand: Helm merges this map into yours). With a fixed count the HPA is off:
 * the chart renders `replicas` only then.
 */
export function autoscalingValues(autoscaler: AutoscalerData | null): Record<string, unknown> {
  if (!autoscaler) return { enabled: false };
  return {
    enabled: true,
    minReplicas: autoscaler.minReplicas,
    maxReplicas: autoscaler.maxReplicas,
    ...(autoscaler.targetCPUUtilizationPercentage !== undefined ? { targetCPUUtilizationPercentage: autoscaler.targetCPUUtilizationPercentage } : {}),
    ...(autoscaler.behavior !== undefined ? { autoscaleBehavior: autoscaler.behavior } : {}),
  };
}

/**
 * The values keys both chart kinds share (the in-house chart mirrors istio/gateway's names), each
 * a projection of one field of the pod changes. Keys whose value would be empty are left out, so
 * the chart's own default stands.
 */
export function podValues(changes: PodChanges): Record<string, unknown> {
  const service = serviceValues(changes);
  return {
    // An HPA owns the count: no replicaCount (the chart renders none with autoscaling on).
    ...(changes.replicas !== null ? { replicaCount: changes.replicas } : {}),
    autoscaling: autoscalingValues(changes.autoscaler),
    strategy: changes.strategy,
    minReadySeconds: changes.minReadySeconds,
    ...(changes.affinity ? { affinity: changes.affinity } : {}),
    terminationGracePeriodSeconds: changes.terminationGracePeriodSeconds,
    podAnnotations: changes.podAnnotations,
    volumes: changes.volumes,
    // The chart's hook for the hc sidecar's list: a native sidecar is an init container.
    ...(changes.hcPlacement === 'initContainers' ? { initContainers: [changes.hcContainer] } : { additionalContainers: [changes.hcContainer] }),
    // The chart's `lifecycle` value is the proxy container's lifecycle: the hold.
    lifecycle: changes.proxy.lifecycle,
    ...(changes.imagePullSecrets.length > 0 ? { imagePullSecrets: changes.imagePullSecrets } : {}),
    ...(service ? { service } : {}),
  };
}

/**
 * The chart's default Service ports as its values write them. Helm replaces a list instead of
 * merging it, so `service.ports` in an overlay has to restate them before the sidecar's health
 * port; a user whose own values set other ports adds the health port to their list instead (the
 * overlay's comment says so).
 */
const CHART_DEFAULT_SERVICE_PORTS = DEFAULT_GATEWAY_PORTS.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol ?? 'TCP', targetPort: p.targetPort }));

/**
 * The chart's `service` values: the gateway Service patch (the LB's annotations, the traffic policy
 * and the health port, each only where planned) in the chart's keys.
 */
function serviceValues(changes: PodChanges): Record<string, unknown> | null {
  const patch = gatewayServicePatch(changes);
  if (!patch) return null;
  return {
    ...(patch.metadata ? { annotations: patch.metadata.annotations } : {}),
    ...(patch.spec?.externalTrafficPolicy ? { externalTrafficPolicy: patch.spec.externalTrafficPolicy } : {}),
    ...(patch.spec?.ports ? { ports: [...CHART_DEFAULT_SERVICE_PORTS.map((p) => ({ ...p })), ...patch.spec.ports] } : {}),
  };
}

import type { PodChanges } from '../../pod/pod-changes';

/**
 * The values keys both chart kinds share (the in-house chart mirrors istio/gateway's names), each
 * a projection of one field of the pod changes. Keys whose value would be empty are left out, so
 * the chart's own default stands.
 */
export function podValues(changes: PodChanges): Record<string, unknown> {
  return {
    replicaCount: changes.replicas,
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
    ...(Object.keys(changes.gatewayServiceAnnotations).length > 0 ? { service: { annotations: changes.gatewayServiceAnnotations } } : {}),
  };
}

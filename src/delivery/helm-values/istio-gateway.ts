import { chartVersion } from '../../plan/chart-version';
import type { PodChanges } from '../../pod/pod-changes';
import { OverlayUnsupportedError } from './overlay-error';
import { podValues } from './pod-values';

/** The container the istio/gateway chart renders, and that its `lifecycle` value applies to. */
export const ISTIO_GATEWAY_PROXY_CONTAINER = 'istio-proxy';

/**
 * The first istio/gateway version whose values schema has each key the overlay writes. The
 * schema sets `additionalProperties: false`, so a key older charts lack fails `helm template`.
 * From the real charts' values.schema.json (istio/istio manifests/charts/gateway at 1.26.8, 1.27.9
 * and 1.30.3: 1.26.8 has `additionalContainers` but not `lifecycle`) and the chart's history
 * (docs/facts.md §5).
 */
export const ISTIO_GATEWAY_KEY_SINCE: Record<string, readonly [number, number]> = {
  replicaCount: [1, 0],
  autoscaling: [1, 0],
  affinity: [1, 0],
  podAnnotations: [1, 0],
  volumes: [1, 0],
  imagePullSecrets: [1, 0],
  service: [1, 0],
  terminationGracePeriodSeconds: [1, 19],
  strategy: [1, 24],
  // In every schema fixture (1.26.8 onwards); older charts are refused for `lifecycle` anyway.
  minReadySeconds: [1, 26],
  additionalContainers: [1, 26],
  lifecycle: [1, 27],
  // 1.26.8's schema takes initContainers, but its template renders none: from 1.27.
  initContainers: [1, 27],
};

function since(key: string): string {
  const [major, minor] = ISTIO_GATEWAY_KEY_SINCE[key]!;
  return `${major}.${minor}`;
}

/**
 * Values overlay for the upstream istio/gateway chart: the shared pod keys, including the chart's
 * own HorizontalPodAutoscaler (on by default, 1-5 replicas): kept with the spec's range when the
 * spec autoscales (the plan then holds at every count of it), off with a fixed `spec.replicas`.
 *
 * Throws OverlayUnsupportedError for a chart version lacking a key the overlay needs (1.26 has no
 * `lifecycle`, so no proxy hold): the post-renderer is the way there.
 */
export function istioGatewayOverlay(changes: PodChanges, version: string): Record<string, unknown> {
  if (changes.proxy.containerName !== ISTIO_GATEWAY_PROXY_CONTAINER) {
    throw new OverlayUnsupportedError(
      `istio/gateway renders its proxy container as '${ISTIO_GATEWAY_PROXY_CONTAINER}', but spec.envoy.containerName is '${changes.proxy.containerName}': remove spec.envoy.containerName`,
    );
  }
  const values: Record<string, unknown> = podValues(changes);
  const v = chartVersion(version);
  const missing = Object.keys(values).filter((key) => {
    const [major, minor] = ISTIO_GATEWAY_KEY_SINCE[key] ?? [Infinity, 0];
    return v.major < major || (v.major === major && v.minor < minor);
  });
  if (missing.length > 0) {
    throw new OverlayUnsupportedError(
      `istio/gateway ${version} cannot carry the hc sidecar and the istio-proxy hold through values: it lacks ${missing.map((k) => `'${k}' (since ${since(k)})`).join(', ')}, and its values schema rejects unknown keys.\n` +
        `Deliver with 'gracegate post-render' as a Helm --post-renderer (or Kustomize) instead, or upgrade the chart to 1.27 or later.`,
    );
  }
  return values;
}

import type { TrafficPathSpec } from '../../schema/workload-spec';
import { derived, specInput, type Derived, type GivenPaths } from '../../model/derived';

/**
 * kube-proxy's update chain (EndpointSlice → kube-proxy's watch → the node's rules) measured at
 * 2-4 s in a rolling-restart experiment of a Go app behind kube-proxy in iptables mode
 * (docs/facts.md §9); the default is its upper end.
 */
export const KUBE_PROXY_PROPAGATION_SECONDS = 4;

const KUBE_PROXY_SOURCE = `${KUBE_PROXY_PROPAGATION_SECONDS} s, the upper end of the 2-4 s kube-proxy takes to drop an endpoint (docs/facts.md §9)`;

/** How long the network path needs, and whether that number is a measured default or an assumption. */
export type Propagation = { delay: Derived; assumed: boolean };

/**
 * Seconds from the pod's deletion until no new connection reaches it: the time the preStop must
 * cover. The spec's own number wins; otherwise the path's default, each with its basis.
 */
export function propagationDelay(path: TrafficPathSpec, given: GivenPaths): Propagation {
  const field = 'spec.trafficPath.propagationDelay';
  if (path.propagationDelay !== undefined) {
    return { delay: derived(path.propagationDelay, field, { propagationDelay: { value: path.propagationDelay, source: field } }), assumed: false };
  }
  switch (path.via) {
    case 'kube-proxy':
      return {
        delay: derived(KUBE_PROXY_PROPAGATION_SECONDS, `kube-proxy (${path.mode}): EndpointSlice → rules on every node`, {
          kubeProxyDelay: { value: KUBE_PROXY_PROPAGATION_SECONDS, source: `default: ${KUBE_PROXY_SOURCE}` },
        }),
        assumed: false,
      };
    case 'ingress':
      // The proxy reads the same EndpointSlices kube-proxy does; how fast it acts on them is its own.
      return {
        delay: derived(
          KUBE_PROXY_PROPAGATION_SECONDS,
          `${path.controller ?? 'the ingress proxy'} watches the EndpointSlices kube-proxy watches: assumed as fast`,
          { assumedDelay: { value: KUBE_PROXY_PROPAGATION_SECONDS, source: `default (assumed): ${KUBE_PROXY_SOURCE}` } },
        ),
        assumed: true,
      };
    case 'external-lb': {
      const kubeProxy = { value: KUBE_PROXY_PROPAGATION_SECONDS, source: `default: ${KUBE_PROXY_SOURCE}` };
      if (path.externalTrafficPolicy === 'Cluster') {
        return {
          delay: derived(KUBE_PROXY_PROPAGATION_SECONDS, "externalTrafficPolicy Cluster: every node forwards through kube-proxy, so kube-proxy's delay", {
            kubeProxyDelay: kubeProxy,
          }),
          assumed: false,
        };
      }
      // Local: the LB keeps sending to the node until its check of healthCheckNodePort fails, which
      // happens once the node has only terminating endpoints; meanwhile kube-proxy sends to the
      // terminating pod (docs/facts.md §6, KEP-1669).
      const interval = path.healthCheckInterval!;
      const threshold = path.unhealthyThreshold!;
      const detect = interval * threshold;
      return {
        delay: derived(Math.max(KUBE_PROXY_PROPAGATION_SECONDS, detect), 'max(kubeProxyDelay, healthCheckInterval x unhealthyThreshold)', {
          kubeProxyDelay: kubeProxy,
          healthCheckInterval: specInput(given, 'spec.trafficPath.healthCheckInterval', interval, ''),
          unhealthyThreshold: specInput(given, 'spec.trafficPath.unhealthyThreshold', threshold, ''),
        }),
        assumed: false,
      };
    }
  }
}

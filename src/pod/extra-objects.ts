import type { K8sObject } from './k8s';
import { hpaSpec } from './k8s-shapes';
import { HC_CONFIG_KEY, HC_HEALTH_PORT_NAME, MANAGED_BY_LABEL } from './names';
import type { PodChanges, PolicySources, StreamLimit, StreamLimitsData } from './pod-changes';

function metadata(changes: PodChanges, name: string) {
  return { name, namespace: changes.gateway.namespace, labels: { ...changes.selectorLabels, ...MANAGED_BY_LABEL } };
}

/** The sidecar's configuration, mounted read-only at /etc/gracegate. */
export function hcConfigMapObject(changes: PodChanges): K8sObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: metadata(changes, changes.hcConfigMapName),
    data: { [HC_CONFIG_KEY]: `${JSON.stringify(changes.hcConfig, null, 2)}\n` },
  };
}

/**
 * The Service the LB probes `/health_check.html` through. A plain object: cdk8s-plus-28's Service
 * has no `externalTrafficPolicy` (docs/facts.md §7).
 *
 * `publishNotReadyAddresses: true`: the LB must hear the sidecar itself at every moment, not a
 * side effect of Kubernetes readiness. Without it, a pod that turns unready (or terminating, on
 * clusters without the terminating-endpoint fallback) vanishes from the Service and the LB sees a
 * refused connection at a time the plan did not choose. The sidecar answers 503 until Envoy is
 * ready, so a starting pod is not put in the pool early.
 */
export function healthServiceObject(changes: PodChanges): K8sObject | null {
  const svc = changes.healthService;
  if (!svc) return null;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(changes, svc.name),
    spec: {
      type: svc.type,
      selector: { ...changes.selectorLabels },
      ports: [
        {
          name: HC_HEALTH_PORT_NAME,
          protocol: 'TCP',
          port: svc.port,
          targetPort: HC_HEALTH_PORT_NAME,
          ...(svc.nodePort !== undefined ? { nodePort: svc.nodePort } : {}),
        },
      ],
      ...(svc.externalTrafficPolicy ? { externalTrafficPolicy: svc.externalTrafficPolicy } : {}),
      publishNotReadyAddresses: true,
    },
  };
}

/**
 * The PodDisruptionBudget matching the rollout plan. `unhealthyPodEvictionPolicy: AlwaysAllow`:
 * a gateway pod that is not ready serves nothing, so it must never block a node drain.
 * Leave the istio/gateway chart's own `podDisruptionBudget` empty: two PDBs over one pod make every
 * eviction of it fail.
 */
export function disruptionBudgetObject(changes: PodChanges): K8sObject | null {
  const pdb = changes.disruptionBudget;
  if (!pdb) return null;
  return podDisruptionBudget(metadata(changes, pdb.name), changes.selectorLabels, pdb.maxUnavailable);
}

/** A PodDisruptionBudget over the pods `selector` picks (a gateway's, a workload's). */
export function podDisruptionBudget(meta: K8sObject['metadata'], selector: Record<string, string>, maxUnavailable: number): K8sObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: meta,
    spec: {
      maxUnavailable,
      selector: { matchLabels: { ...selector } },
      unhealthyPodEvictionPolicy: 'AlwaysAllow',
    },
  };
}

/**
 * The gateway's namespace with the labels the plan needs, or null when it needs none. Not among
 * `extraObjects`: a Helm release or Kustomize overlay must not own the namespace it installs into;
 * `kubectl apply` of this object only adds the labels to the existing namespace.
 */
export function namespaceObject(changes: PodChanges): K8sObject | null {
  if (Object.keys(changes.namespaceLabels).length === 0) return null;
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: changes.gateway.namespace, labels: { ...changes.namespaceLabels } } };
}

/** Envoy's filter names and config types the EnvoyFilter patches (envoyproxy/envoy api/envoy/extensions). */
export const HCM_FILTER = 'envoy.filters.network.http_connection_manager';
export const HCM_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
export const TCP_PROXY_FILTER = 'envoy.filters.network.tcp_proxy';
export const TCP_PROXY_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';

/**
 * The limits as Envoy takes them: which filter each goes to, where in its typed_config, and the
 * limit (value and reason). One list for the EnvoyFilter and for the comments beside its values.
 */
function limitPatches(l: StreamLimitsData): Array<{ filter: string; type: string; at: string[]; limits: Record<string, StreamLimit> }> {
  return [
    {
      filter: HCM_FILTER,
      type: HCM_TYPE,
      at: ['common_http_protocol_options'],
      limits: { max_connection_duration: l.maxConnectionDuration, max_stream_duration: l.maxStreamDuration },
    },
    ...(l.tcpMaxDownstreamConnectionDuration
      ? [{ filter: TCP_PROXY_FILTER, type: TCP_PROXY_TYPE, at: [], limits: { max_downstream_connection_duration: l.tcpMaxDownstreamConnectionDuration } }]
      : []),
  ];
}

/**
 * The EnvoyFilter that sets the long-lived plan's stream limits on the gateway's pods (its
 * workloadSelector is the pods' labels): on every HTTP connection manager
 * `common_http_protocol_options.max_connection_duration` and `max_stream_duration`, on every TCP
 * proxy `max_downstream_connection_duration` (when the spec lists tcp), each a MERGE into the
 * filter's typed_config. Null without a bound. Measured on real Envoy: docs/long-lived.md.
 */
export function streamLimitsObject(changes: PodChanges): K8sObject | null {
  const l = changes.streamLimits;
  if (!l) return null;
  return {
    apiVersion: 'networking.istio.io/v1alpha3',
    kind: 'EnvoyFilter',
    metadata: metadata(changes, l.name),
    spec: {
      workloadSelector: { labels: { ...changes.selectorLabels } },
      configPatches: limitPatches(l).map((p) => {
        const values = Object.fromEntries(Object.entries(p.limits).map(([field, limit]) => [field, `${limit.seconds}s`]));
        const typedConfig = p.at.reduceRight<Record<string, unknown>>((inner, key) => ({ [key]: inner }), values);
        return {
          applyTo: 'NETWORK_FILTER',
          match: { context: 'GATEWAY', listener: { filterChain: { filter: { name: p.filter } } } },
          patch: { operation: 'MERGE', value: { typed_config: { '@type': p.type, ...typedConfig } } },
        };
      }),
    },
  };
}

/** Where each limit sits in streamLimitsObject, with its reason (for the comments beside it). */
export function streamLimitsReasons(changes: PodChanges): Array<{ path: Array<string | number>; why: string }> {
  const l = changes.streamLimits;
  if (!l) return [];
  return limitPatches(l).flatMap((p, i) =>
    Object.entries(p.limits).map(([field, limit]) => ({
      path: ['spec', 'configPatches', i, 'patch', 'value', 'typed_config', ...p.at, field],
      why: limit.why,
    })),
  );
}

type PortRange = { protocol: 'TCP' | 'UDP' | 'SCTP'; port: number; endPort?: number };

/** 1-65535 minus `closed`, as NetworkPolicy port entries (ranges need `endPort`, GA in Kubernetes 1.25). */
export function openRanges(protocol: PortRange['protocol'], closed: readonly number[]): PortRange[] {
  const out: PortRange[] = [];
  let from = 1;
  for (const port of [...new Set(closed)].sort((a, b) => a - b)) {
    if (port > from) out.push(port - 1 > from ? { protocol, port: from, endPort: port - 1 } : { protocol, port: from });
    from = port + 1;
  }
  if (from <= 65535) out.push(from < 65535 ? { protocol, port: from, endPort: 65535 } : { protocol, port: from });
  return out;
}

/** The namespace label every namespace carries (Kubernetes 1.22+): a namespace by its name. */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

function peers(from: PolicySources): Array<Record<string, unknown>> {
  return [
    ...from.ipBlocks.map((cidr) => ({ ipBlock: { cidr } })),
    ...from.namespaces.map((name) => ({ namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: name } } })),
  ];
}

/**
 * The NetworkPolicy over the sidecar's ports (PodChanges.networkPolicy says who reaches each). A
 * port's rule with no peer admits nobody but the node (which a NetworkPolicy always allows): a rule
 * with an empty `from` would admit everyone, so a port nobody may reach gets no rule at all.
 */
export function networkPolicyObject(changes: PodChanges): K8sObject | null {
  const np = changes.networkPolicy;
  if (!np) return null;
  const closed = [np.healthPort, np.witnessPort, np.metricsPort];
  const rule = (port: number, from: PolicySources) => {
    const list = peers(from);
    return list.length === 0 ? [] : [{ from: list, ports: [{ protocol: 'TCP', port }] }];
  };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: metadata(changes, np.name),
    spec: {
      podSelector: { matchLabels: { ...changes.selectorLabels } },
      policyTypes: ['Ingress'],
      ingress: [
        ...(np.healthFrom ? rule(np.healthPort, np.healthFrom) : [{ ports: [{ protocol: 'TCP', port: np.healthPort }] }]),
        ...rule(np.metricsPort, np.metricsFrom),
        { ports: [...openRanges('TCP', closed), ...openRanges('UDP', []), ...openRanges('SCTP', [])] },
      ],
    },
  };
}

/**
 * The objects no gateway chart carries, as plain Kubernetes JSON: the hc ConfigMap, the health
 * Service (unless hostPort), the PDB (unless one replica), the stream limits' EnvoyFilter
 * (with spec.traffic.longLived.maxStreamLifetimeSeconds) and the NetworkPolicy over the sidecar's
 * ports (unless spec.networkPolicy.enabled is false). The post-renderer appends these as
 * they are; the constructs wrap each in an ApiObject. The NLB annotations are not an object: they
 * go on the chart's own Service (`changes.gatewayServiceAnnotations`).
 */
export function extraObjects(changes: PodChanges): K8sObject[] {
  return [
    hcConfigMapObject(changes),
    healthServiceObject(changes),
    disruptionBudgetObject(changes),
    streamLimitsObject(changes),
    networkPolicyObject(changes),
  ].filter((o): o is K8sObject => o !== null);
}

/**
 * The gateway's HorizontalPodAutoscaler (autoscaling/v2) for a builder that creates the whole
 * gateway (the constructs), where no chart brings one: the range, the CPU target (omitted:
 * Kubernetes' 80 %) and the spec's behaviour. Null with a fixed replica count.
 */
export function autoscalerObject(changes: PodChanges, deploymentName: string): K8sObject | null {
  const a = changes.autoscaler;
  if (!a) return null;
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: metadata(changes, deploymentName),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: deploymentName },
      ...hpaSpec(a),
    },
  };
}

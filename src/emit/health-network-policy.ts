import { stringify } from 'yaml';
import type { K8sObject } from '../pod/k8s';
import { MANAGED_BY_LABEL } from '../pod/names';
import type { PodChanges } from '../pod/pod-changes';

/**
 * `network-policy.yaml`: a NetworkPolicy that closes the sidecar's two listening ports to everyone
 * but the LB and the node, written beside manifests.yaml but not part of it, because its source
 * addresses are the user's to fill in (docs/hc.md, "Exposure").
 *
 * - health port: only from the LB's addresses (a placeholder from the documentation range,
 *   RFC 5737, that matches nothing until it is replaced);
 * - witness port: from nowhere. Traffic from the pod's own node is always allowed by a NetworkPolicy
 *   (kubernetes.io/docs/concepts/services-networking/network-policies/, "IP blocks"), so the
 *   kubelet's preStop and probes still arrive; other pods can no longer hold or lend the witness;
 * - every other port, TCP, UDP and SCTP, from anywhere, exactly as without the policy: the gateway's
 *   own traffic is untouched. Port ranges need `endPort` (NetworkPolicy, GA in Kubernetes 1.25).
 */

/** TEST-NET-1 (RFC 5737): no real LB has it, so nothing passes before it is replaced. */
export const LB_SOURCE_PLACEHOLDER = '192.0.2.0/24';

type PortRange = { protocol: 'TCP' | 'UDP' | 'SCTP'; port: number; endPort?: number };

/** 1-65535 minus `closed`, as NetworkPolicy port entries. */
function openRanges(protocol: PortRange['protocol'], closed: readonly number[]): PortRange[] {
  const out: PortRange[] = [];
  let from = 1;
  for (const port of [...new Set(closed)].sort((a, b) => a - b)) {
    if (port > from) out.push(port - 1 > from ? { protocol, port: from, endPort: port - 1 } : { protocol, port: from });
    from = port + 1;
  }
  if (from <= 65535) out.push(from < 65535 ? { protocol, port: from, endPort: 65535 } : { protocol, port: from });
  return out;
}

export function healthNetworkPolicyObject(changes: PodChanges): K8sObject {
  const healthPort = changes.hcConfig.healthPort!;
  const witnessPort = changes.hcConfig.witnessPort!;
  const closed = [healthPort, witnessPort];
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: `${changes.gateway.name}-gracegate-hc-ports`,
      namespace: changes.gateway.namespace,
      labels: { ...changes.selectorLabels, ...MANAGED_BY_LABEL },
    },
    spec: {
      podSelector: { matchLabels: { ...changes.selectorLabels } },
      policyTypes: ['Ingress'],
      ingress: [
        { from: [{ ipBlock: { cidr: LB_SOURCE_PLACEHOLDER } }], ports: [{ protocol: 'TCP', port: healthPort }] },
        { ports: [...openRanges('TCP', closed), ...openRanges('UDP', []), ...openRanges('SCTP', [])] },
      ],
    },
  };
}

/** Where the LB's probes come from, per exposure: what to put in place of the placeholder. */
function sourcesHint(changes: PodChanges): string[] {
  const svc = changes.healthService;
  if (svc === null) {
    return ["hostPort: the LB probes <node>:<hostPort>; its source is the LB's own address (NetScaler SNIP,", 'F5 self IP, NLB subnets), kept as is.'];
  }
  if (svc.type === 'NodePort') {
    return [
      "NodePort with externalTrafficPolicy: Local keeps the client address: the LB's own addresses",
      "(NetScaler SNIP, F5 self IP, the NLB's subnets or the VPC CIDR, HAProxy's host).",
    ];
  }
  return ['ClusterIP: the LB is in the cluster (an in-mesh Envoy): replace the ipBlock with a podSelector', "(and namespaceSelector) matching the LB's pods."];
}

export function healthNetworkPolicyYaml(changes: PodChanges): string {
  const o = healthNetworkPolicyObject(changes);
  const header = [
    `# Recommended NetworkPolicy for gateway ${changes.gateway.namespace}/${changes.gateway.name}: NOT in manifests.yaml.`,
    `# Replace ${LB_SOURCE_PLACEHOLDER} with the addresses the LB probes from, then kubectl apply -f network-policy.yaml.`,
    ...sourcesHint(changes).map((l) => `#   ${l}`),
    `# Health port ${changes.hcConfig.healthPort}: only the LB (and the node: the kubelet's probes). Witness port`,
    `# ${changes.hcConfig.witnessPort}: only the node (the kubelet's preStop); node traffic is always allowed by a`,
    '# NetworkPolicy. All other ports stay open to everyone. Why: docs/hc.md, "Exposure".',
  ];
  return `${header.join('\n')}\n---\n${stringify(o, { lineWidth: 0 })}`;
}

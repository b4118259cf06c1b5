import type { K8sObject } from './k8s';
import { hpaSpec } from './k8s-shapes';
import { HC_CONFIG_KEY, HC_HEALTH_PORT_NAME, MANAGED_BY_LABEL } from './names';
import type { PodChanges } from './pod-changes';

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
      ports: [{
        name: HC_HEALTH_PORT_NAME,
        protocol: 'TCP',
        port: svc.port,
        targetPort: HC_HEALTH_PORT_NAME,
        ...(svc.nodePort !== undefined ? { nodePort: svc.nodePort } : {}),
      }],
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

/**
 * The objects no gateway chart carries, as plain Kubernetes JSON: the hc ConfigMap, the health
 * Service (unless hostPort) and the PDB (unless one replica). The post-renderer appends these as
 * they are; the constructs wrap each in an ApiObject. The NLB annotations are not an object: they
 * go on the chart's own Service (`changes.gatewayServiceAnnotations`).
 */
export function extraObjects(changes: PodChanges): K8sObject[] {
  return [hcConfigMapObject(changes), healthServiceObject(changes), disruptionBudgetObject(changes)]
    .filter((o): o is K8sObject => o !== null);
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

import { stringify } from 'yaml';
import { YAML_OUTPUT } from '../../core/yaml-output';
import { hcConfigMapObject, healthServiceObject, networkPolicyObject, streamLimitsObject } from '../../pod/extra-objects';
import type { JsonObject } from '../../core/json';
import type { K8sObject } from '../../pod/k8s';
import { hpaSpec } from '../../pod/k8s-shapes';
import { MANAGED_BY_LABEL, gatewayApiSelectorLabels, objectNames } from '../../pod/names';
import type { GatewayApiData, PodChanges } from '../../pod/pod-changes';
import { GracegateError } from '../../core/errors';
import { gatewayServicePatch } from '../service-patch';

/*
 * Istio's Gateway API path: istiod deploys a Gateway's ServiceAccount, Deployment and Service itself,
 * and the only way to change them is a ConfigMap its deployment controller applies (istio/istio
 * pilot/pkg/config/kube/gateway/deploymentcontroller.go, 1.26 onwards): the one the Gateway names in
 * `spec.infrastructure.parametersRef` (group "", kind ConfigMap, in the Gateway's namespace), after
 * the class defaults (a ConfigMap in istiod's namespace labelled `gateway.istio.io/defaults-for-class:
 * <class>`). Each key is a strategic merge patch, in YAML, of one object; an HPA or PDB exists only
 * when its key is there; a key outside the five, or a patch that changes the object's name,
 * namespace or owners, makes istiod deploy nothing for the Gateway.
 */

/** The keys istiod's deployment controller applies (`supportedOverlays`). */
export const GATEWAY_API_KEYS = ['deployment', 'service', 'serviceAccount', 'horizontalPodAutoscaler', 'podDisruptionBudget'] as const;
export type GatewayApiKey = (typeof GATEWAY_API_KEYS)[number];

/** The label that makes a ConfigMap in istiod's namespace the defaults of a GatewayClass. */
export const CLASS_DEFAULTS_LABEL = 'gateway.istio.io/defaults-for-class';

/** The changes are not for a Gateway API gateway (the caller chose the wrong emitter). */
export class GatewayApiError extends GracegateError {}

function gatewayApiOf(changes: PodChanges): GatewayApiData {
  if (!changes.gatewayApi) throw new GatewayApiError('spec.chart.kind is not gateway-api: a chart renders this gateway; use the values overlay or post-render');
  return changes.gatewayApi;
}

/**
 * The `deployment` patch: the sidecar, the proxy hold, probes (the sidecar's own), grace period,
 * strategy, anti-affinity and pod annotations, as one strategic merge patch of istiod's Deployment.
 *
 * istiod applies it with apimachinery's strategic merge, where `$patch: replace` on a map the
 * object does not have yet drops that map (measured with `kubectl patch --type strategic`, the same
 * library): so a handler or an anti-affinity kind gracegate replaces is cleared by setting its
 * siblings to null instead. Containers and volumes merge by name; with an HPA, `replicas: null`
 * removes a count a class default may have set.
 */
export function gatewayApiDeploymentPatch(changes: PodChanges): JsonObject {
  const preStop = { exec: null, tcpSocket: null, sleep: null, ...changes.proxy.lifecycle.preStop } as JsonObject;
  const affinity = changes.affinity?.podAntiAffinity;
  const antiAffinity =
    affinity === undefined
      ? undefined
      : 'requiredDuringSchedulingIgnoredDuringExecution' in affinity
        ? {
            requiredDuringSchedulingIgnoredDuringExecution: affinity.requiredDuringSchedulingIgnoredDuringExecution,
            preferredDuringSchedulingIgnoredDuringExecution: null,
          }
        : {
            preferredDuringSchedulingIgnoredDuringExecution: affinity.preferredDuringSchedulingIgnoredDuringExecution,
            requiredDuringSchedulingIgnoredDuringExecution: null,
          };
  return structuredClone({
    spec: {
      replicas: changes.replicas,
      strategy: changes.strategy,
      minReadySeconds: changes.minReadySeconds,
      template: {
        metadata: { annotations: changes.podAnnotations },
        spec: {
          terminationGracePeriodSeconds: changes.terminationGracePeriodSeconds,
          ...(antiAffinity ? { affinity: { podAntiAffinity: antiAffinity } } : {}),
          volumes: changes.volumes,
          containers: [{ name: changes.proxy.containerName, lifecycle: { preStop } }, changes.hcContainer],
        },
      },
    },
  }) as unknown as JsonObject;
}

/** The `podDisruptionBudget` patch (istiod's PDB selects the Gateway's pods), or null: no PDB. */
export function gatewayApiDisruptionBudgetPatch(changes: PodChanges): JsonObject | null {
  if (!changes.disruptionBudget) return null;
  // minAvailable: null: a PDB may hold only one of the two, and class defaults may have set it.
  return { spec: { maxUnavailable: changes.disruptionBudget.maxUnavailable, minAvailable: null, unhealthyPodEvictionPolicy: 'AlwaysAllow' } };
}

/** The `horizontalPodAutoscaler` patch (istiod's HPA targets its Deployment), or null: no HPA. */
export function gatewayApiAutoscalerPatch(changes: PodChanges): JsonObject | null {
  const a = changes.autoscaler;
  if (!a) return null;
  return structuredClone({
    spec: hpaSpec(a),
  }) as unknown as JsonObject;
}

/**
 * The `service` patch: the LB's annotations (model nlb), the traffic policy and the health port on
 * istiod's Service (a strategic merge: the port is added beside the Gateway's listeners'), or null.
 */
export function gatewayApiServicePatch(changes: PodChanges): JsonObject | null {
  return gatewayServicePatch(changes) as JsonObject | null;
}

/** Every key gracegate writes, as the YAML strings istiod reads. */
export function gatewayApiPatches(changes: PodChanges): Partial<Record<GatewayApiKey, JsonObject>> {
  gatewayApiOf(changes);
  const out: Partial<Record<GatewayApiKey, JsonObject>> = { deployment: gatewayApiDeploymentPatch(changes) };
  const pdb = gatewayApiDisruptionBudgetPatch(changes);
  if (pdb) out.podDisruptionBudget = pdb;
  const hpa = gatewayApiAutoscalerPatch(changes);
  if (hpa) out.horizontalPodAutoscaler = hpa;
  const service = gatewayApiServicePatch(changes);
  if (service) out.service = service;
  return out;
}

export function patchText(patch: JsonObject): string {
  return stringify(patch, YAML_OUTPUT);
}

/** The parameters ConfigMap: the Gateway's (parametersRef) or the class defaults. */
export function gatewayParametersObject(changes: PodChanges): K8sObject {
  const g = gatewayApiOf(changes);
  const data = Object.fromEntries(Object.entries(gatewayApiPatches(changes)).map(([k, v]) => [k, patchText(v)]));
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: g.parametersName,
      namespace: g.parametersNamespace,
      labels: { ...MANAGED_BY_LABEL, ...(g.classDefaults ? { [CLASS_DEFAULTS_LABEL]: g.className } : {}) },
    },
    data,
  };
}

/** The Gateway's one line (or, class-wide, what to check), in the words a user pastes. */
export function parametersRefText(changes: PodChanges, parametersName = gatewayApiOf(changes).parametersName): string {
  const g = gatewayApiOf(changes);
  if (g.classDefaults) {
    return `every Gateway with gatewayClassName: ${g.className} gets these patches from istiod (the ConfigMap is labelled ${CLASS_DEFAULTS_LABEL}: ${g.className} in ${g.parametersNamespace}); no Gateway needs a change`;
  }
  return `spec.infrastructure.parametersRef: {group: "", kind: ConfigMap, name: ${parametersName}}`;
}

/** The Kustomize patch that adds the parametersRef to the user's Gateway (kind Gateway, by name). */
export function gatewayRefPatch(changes: PodChanges, parametersName = gatewayApiOf(changes).parametersName): K8sObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: changes.gateway.name },
    spec: { infrastructure: { parametersRef: { group: '', kind: 'ConfigMap', name: parametersName } } },
  };
}

/**
 * The pod changes rebound to one Gateway of the class: its name, namespace and pod label; the hc
 * ConfigMap keeps the class-wide name every Gateway's pods mount.
 */
function forGateway(changes: PodChanges, gateway: { name: string; namespace: string }): PodChanges {
  return {
    ...changes,
    gateway: { ...gateway },
    selectorLabels: gatewayApiSelectorLabels(gateway.name),
    healthService: changes.healthService ? { ...changes.healthService, name: objectNames(gateway.name).healthService } : null,
    streamLimits: changes.streamLimits ? { ...changes.streamLimits, name: objectNames(gateway.name).streamLimits } : null,
    networkPolicy: changes.networkPolicy ? { ...changes.networkPolicy, name: objectNames(gateway.name).networkPolicy } : null,
  };
}

/**
 * What goes to `manifests.yaml` on this path: the hc ConfigMap, the health Service, the stream
 * limits' EnvoyFilter (with a lifetime bound) and the NetworkPolicy over the sidecar's ports, selecting by the label istiod puts on the Gateway's pods. The PDB is not here: istiod makes it from the
 * `podDisruptionBudget` key. Class-wide: one hc ConfigMap per namespace and one health Service per
 * listed Gateway.
 */
export function gatewayApiManifestObjects(changes: PodChanges): K8sObject[] {
  const g = gatewayApiOf(changes);
  const gateways = g.classDefaults ? g.classDefaults.gateways : [changes.gateway];
  const out: K8sObject[] = [];
  const namespaces = new Set<string>();
  for (const gw of gateways) {
    const one = forGateway(changes, gw);
    if (!namespaces.has(gw.namespace)) {
      namespaces.add(gw.namespace);
      out.push(hcConfigMapObject(one));
    }
    const svc = healthServiceObject(one);
    if (svc) out.push(svc);
    const limits = streamLimitsObject(one);
    if (limits) out.push(limits);
    const policy = networkPolicyObject(one);
    if (policy) out.push(policy);
  }
  // The objects' own labels leave out the Gateway's pod label: Istio reads it on objects to find the
  // waypoint they belong to (ambient/waypoints.go fetchWaypointForInstance), and a class-wide hc
  // ConfigMap is no one Gateway's. The health Service still selects by it.
  for (const o of out) o.metadata.labels = { ...MANAGED_BY_LABEL };
  return out;
}

/** `manifests.yaml` for the Gateway API path. */
export function gatewayApiManifestsYaml(changes: PodChanges): string {
  const header = [
    `# Objects for ${changes.gatewayApi?.classDefaults ? `the Gateways of class ${changes.gatewayApi.className}` : `Gateway ${changes.gateway.namespace}/${changes.gateway.name}`} that istiod does not deploy: the hc ConfigMap${changes.healthService ? ' and the health Service' : ''}${changes.streamLimits ? ', the EnvoyFilter with the stream limits' : ''}${changes.networkPolicy ? ", the NetworkPolicy over the sidecar's ports" : ''}.`,
    '# Generated by gracegate synth: do not edit. Apply with: kubectl apply -f manifests.yaml',
    changes.healthService
      ? `# The health Service selects the pods by ${Object.keys(gatewayApiSelectorLabels('x'))[0]}, the label istiod puts on a Gateway's pods.`
      : "# The health port is on istiod's Service of the Gateway (gateway-parameters.yaml, key service): one slice with the traffic.",
  ];
  return `${header.join('\n')}\n${gatewayApiManifestObjects(changes)
    .map((o) => `---\n${stringify(o, { lineWidth: 0 })}`)
    .join('')}`;
}

/** `gateway-parameters.yaml`: the ConfigMap, with a header saying what to do with it. */
export function gatewayParametersYaml(changes: PodChanges, configMap: K8sObject = gatewayParametersObject(changes)): string {
  const g = gatewayApiOf(changes);
  const header = g.classDefaults
    ? [
        `# Class defaults for every Gateway of class ${g.className}: istiod applies these patches to each one's Deployment,`,
        `# HPA and PDB (it reads ${CLASS_DEFAULTS_LABEL} ConfigMaps in its own namespace, ${g.parametersNamespace}).`,
      ]
    : [
        `# Parameters for Gateway ${changes.gateway.namespace}/${changes.gateway.name}: istiod applies each key as a strategic merge patch`,
        `# of the object it deploys (Deployment ${g.deploymentName}, its HPA and PDB). Add to the Gateway:`,
        `#   ${parametersRefText(changes, configMap.metadata.name)}`,
      ];
  return [
    ...header,
    '# Generated by gracegate synth: do not edit; change the spec and synth again. Apply with: kubectl apply -f gateway-parameters.yaml',
    stringify(configMap, { lineWidth: 0 }),
  ].join('\n');
}

/**
 * The Kustomize component for this path: the parameters ConfigMap and the manifests as resources,
 * and (one Gateway) a patch adding the parametersRef to the user's Gateway, matched by kind and
 * name. Class defaults need no Gateway patch.
 */
export function gatewayApiKustomizeComponent(changes: PodChanges, configMap: K8sObject = gatewayParametersObject(changes)): Record<string, string> {
  const g = gatewayApiOf(changes);
  const header = `# Kustomize component: gracegate's parameters for ${g.classDefaults ? `the Gateways of class ${g.className}` : `Gateway ${changes.gateway.namespace}/${changes.gateway.name}`}.\n# Generated by gracegate synth --kustomize: do not edit; change the spec and synth again.\n`;
  const kustomization = {
    apiVersion: 'kustomize.config.k8s.io/v1alpha1',
    kind: 'Component',
    resources: ['gateway-parameters.yaml', 'objects.yaml'],
    ...(g.classDefaults
      ? {}
      : { patches: [{ path: 'gateway-patch.yaml', target: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: changes.gateway.name } }] }),
  };
  const files: Record<string, string> = {
    'kustomization.yaml': `${header}${stringify(kustomization, YAML_OUTPUT)}`,
    'gateway-parameters.yaml': `${header}${stringify(configMap, YAML_OUTPUT)}`,
    'objects.yaml': `${header}${gatewayApiManifestObjects(changes)
      .map((o) => stringify(o, YAML_OUTPUT))
      .join('---\n')}`,
  };
  if (!g.classDefaults) files['gateway-patch.yaml'] = `${header}${stringify(gatewayRefPatch(changes, configMap.metadata.name), YAML_OUTPUT)}`;
  return files;
}

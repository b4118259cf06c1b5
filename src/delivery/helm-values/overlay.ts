import type { PodChanges } from '../../pod/pod-changes';
import { commentedYaml, octalMode, type YamlComment } from '../yaml-comments';
import type { GatewaySpec } from '../../schema/gateway-spec';
import { additionalContainersOverlay } from './additional-containers';
import { istioGatewayOverlay } from './istio-gateway';
import { OverlayUnsupportedError } from './overlay-error';

export { OverlayUnsupportedError } from './overlay-error';
export { istioGatewayOverlay, ISTIO_GATEWAY_KEY_SINCE, ISTIO_GATEWAY_PROXY_CONTAINER } from './istio-gateway';
export { additionalContainersOverlay } from './additional-containers';

/** The overlay for the chart named in `spec.chart`, as a values object. */
export function valuesOverlay(changes: PodChanges, chart: GatewaySpec['spec']['chart']): Record<string, unknown> {
  switch (chart.kind) {
    case 'istio-gateway':
      return istioGatewayOverlay(changes, chart.version);
    case 'additional-containers':
      return additionalContainersOverlay(changes);
    case 'gateway-api':
      throw new OverlayUnsupportedError(
        'a Gateway API gateway has no chart to take values: istiod deploys its pods, and the pod changes go into the parameters ConfigMap (gracegate synth writes gateway-parameters.yaml)',
      );
  }
}

/** What each key of the overlay is for, above it (docs/manifests.md has the long form). */
function overlayComments(values: Record<string, unknown>, changes: PodChanges): YamlComment[] {
  const volumes = (values.volumes as Array<{ configMap?: { defaultMode: number } }> | undefined) ?? [];
  return [
    { path: ['replicaCount'], before: 'spec.replicas: the rollout, the PodDisruptionBudget and the anti-affinity are planned for this count.' },
    ...(changes.autoscaler
      ? [
          {
            path: ['autoscaling'],
            before:
              "The chart's HPA kept, with spec.autoscaling's range: the rollout, the PodDisruptionBudget and the\n anti-affinity are planned for every count from minReplicas to maxReplicas (PLAN.md, scaling).",
          },
        ]
      : [
          {
            path: ['autoscaling'],
            before:
              "The chart's HPA off: every number here is planned for spec.replicas (an HPA may scale past the nodes\n under required anti-affinity and leave pods Pending). Set spec.autoscaling instead to keep an HPA.",
          },
          { path: ['autoscaling', 'enabled'], after: 'istio/gateway enables it by default (min 1, max 5)' },
        ]),
    { path: ['strategy'], before: 'The rollout plan: maxSurge / maxUnavailable that never deadlock with one pod per node (PLAN.md, rollout).' },
    {
      path: ['minReadySeconds'],
      before: "The LB's time to take a new pod back in: a rollout drains the next old pod only once the LB sends the new one traffic.",
    },
    { path: ['affinity'], before: 'Anti-affinity on kubernetes.io/hostname, from the rollout plan.' },
    {
      path: ['terminationGracePeriodSeconds'],
      before: "The whole drain sequence + Envoy's exit + a safety margin (PLAN.md, terminationGracePeriodSeconds): preStop counts against it.",
    },
    {
      path: ['podAnnotations'],
      before:
        "proxy.istio.io/config: Envoy's drain settings and the request gauge the sidecar counts;\n gracegate.dev/hc-config-hash: a changed hc config rolls the pods.",
    },
    { path: ['imagePullSecrets'], before: "spec.imagePullSecrets: the Secrets the kubelet pulls this pod's images with." },
    { path: ['volumes'], before: 'The hc config (the ConfigMap in manifests.yaml, read-only) and the state emptyDir (a restarted sidecar resumes from it).' },
    ...volumes.flatMap((v, i) => (v.configMap ? [{ path: ['volumes', i, 'configMap', 'defaultMode'], after: octalMode(v.configMap.defaultMode) }] : [])),
    {
      path: ['additionalContainers'],
      before: 'The hc sidecar, an ordinary container next to istio-proxy: health endpoints for the LB and the kubelet, the drain.',
    },
    {
      path: ['initContainers'],
      before: 'The hc sidecar as a native sidecar (restartPolicy Always): started before istio-proxy, stopped after it\n (docs/native-sidecar.md).',
    },
    {
      path: ['lifecycle'],
      before: `istio-proxy's preStop: held on the sidecar's witness port (${changes.proxy.lifecycle.preStop.httpGet.port}) until the sequence ends, so Envoy gets SIGTERM only then.`,
    },
    { path: ['service'], before: "The gateway's own Service: the LB's annotations, the traffic policy and, where planned, the health port." },
    ...(changes.gatewayServiceHealthPort
      ? [
          {
            path: ['service', 'ports'],
            before:
              "The chart's own ports, then the sidecar's health port: the LB's probe takes the traffic's rules (one\n slice, one sync), so a new pod passes only once its node's traffic rule leads to it (docs/hc.md).",
          },
        ]
      : []),
  ];
}

/** The overlay as the YAML file a user passes with `-f`, with a header saying what it is for and a comment on each key. */
export function valuesOverlayYaml(changes: PodChanges, chart: GatewaySpec['spec']['chart']): string {
  const values = valuesOverlay(changes, chart);
  const target = chart.kind === 'istio-gateway' ? `istio/gateway ${chart.version}` : `an additional-containers chart (${chart.version})`;
  const lists = [
    ...(changes.gatewayServiceHealthPort ? ['service.ports'] : []),
    'volumes',
    changes.hcPlacement === 'initContainers' ? 'initContainers' : 'additionalContainers',
    ...(changes.imagePullSecrets.length > 0 ? ['imagePullSecrets'] : []),
  ];
  const header = [
    `# Helm values overlay for ${target}, gateway ${changes.gateway.namespace}/${changes.gateway.name}.`,
    '# Generated by gracegate synth: do not edit; change the spec and synth again.',
    '# Pass it last: helm upgrade --install <release> <chart> -f your-values.yaml -f values-overlay.yaml',
    `# Helm replaces lists: if your values set ${lists.length > 1 ? `${lists.slice(0, -1).join(', ')} or ${lists[lists.length - 1]}` : lists[0]}, merge those by hand.`,
    ...(chart.kind === 'additional-containers' && changes.hcPlacement === 'initContainers'
      ? ['# The chart must render an initContainers value (charts/gateway-additional-containers does).']
      : []),
  ];
  return `${header.join('\n')}\n${commentedYaml(values, overlayComments(values, changes))}`;
}

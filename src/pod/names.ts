/**
 * Names and paths shared by every projection of the pod changes (constructs, values overlays,
 * post-renderer) and by the hc runtime. One place, so the ConfigMap the overlay mounts is the
 * ConfigMap the manifests create.
 */

import { asObject } from '../core/json';

/** The hc sidecar container. */
export const HC_CONTAINER_NAME = 'gracegate-hc';
/** Named port of the sidecar's health server (LB path, readiness, liveness). */
export const HC_HEALTH_PORT_NAME = 'hc-health';

/** Named port of the sidecar's read-only metrics server (GET /metrics), what the PodMonitor scrapes. */
export const HC_METRICS_PORT_NAME = 'hc-metrics';
/** Envoy's Prometheus port on an Istio gateway pod (15090, named by Istio's gateway injection template). */
export const ENVOY_PROMETHEUS_PORT_NAME = 'http-envoy-prom';

/** Where the hc config ConfigMap is mounted, and the file the sidecar reads. */
export const HC_CONFIG_DIR = '/etc/gracegate';
export const HC_CONFIG_KEY = 'hc.json';
export const HC_CONFIG_PATH = `${HC_CONFIG_DIR}/${HC_CONFIG_KEY}`;

/** The emptyDir holding the sidecar's state file, so a restarted sidecar resumes a running sequence. */
export { STATE_DIR as HC_STATE_DIR, STATE_FILE as HC_STATE_FILE } from '../contract/hc';

export const HC_CONFIG_VOLUME = 'gracegate-hc-config';
export const HC_STATE_VOLUME = 'gracegate-state';

/** The sidecar's endpoints, one per party (docs/facts.md §1): the contract's, re-exported for the projections. */
export { PATHS } from '../contract/hc';

/** Annotation keys gracegate sets on the gateway pods. */
export const ANNOTATIONS = {
  /** Istio's per-pod ProxyConfig (terminationDrainDuration, drainDuration). */
  proxyConfig: 'proxy.istio.io/config',
  /** Hash of the hc config: a changed plan changes the pod template, so the pods roll. */
  hcConfigHash: 'gracegate.dev/hc-config-hash',
  /**
   * Istio's per-pod stats suffixes: when set, Istio uses it INSTEAD of proxyStatsMatcher.inclusionSuffixes
   * (istio/istio pkg/bootstrap/config.go getStatsOptions), so the counting suffixes must be in it too.
   */
  statsInclusionSuffixes: 'sidecar.istio.io/statsInclusionSuffixes',
  /**
   * Istio's injector rewrites every HTTP probe of the pod's other containers to pilot-agent's
   * 15020 unless this says "false" (istio/istio pkg/kube/inject/app_probe.go). The hc's own probes
   * must stay the hc's: rewritten, they fail while pilot-agent starts and after istio-proxy's
   * SIGTERM (so the kubelet could restart the hc mid-sequence), and a native hc's startup probe
   * waits on istio-proxy, which the kubelet starts only after it: the pod never starts.
   */
  rewriteAppHttpProbers: 'sidecar.istio.io/rewriteAppHTTPProbers',
} as const;

/**
 * The suffixes a pod's sidecar.istio.io/statsInclusionSuffixes annotation lists, read as Istio
 * reads it: any non-empty value replaces proxyStatsMatcher's list (split on commas; blanks dropped
 * here). Undefined when the pod has no such annotation (or an empty one): proxyStatsMatcher applies.
 */
export function statsSuffixAnnotation(value: unknown): string[] | undefined {
  if (typeof value !== 'string' || value.length === 0) return undefined;
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Label on every object gracegate emits, so `kubectl get -l` finds them. */
export const MANAGED_BY_LABEL = { 'app.kubernetes.io/managed-by': 'gracegate' } as const;

/**
 * The labels the gateway chart puts on its pods, used as selector by the health Service, the PDB
 * and the anti-affinity. istio/gateway: `app: <name>`, `istio: <name without the istio- prefix>`
 * (`gateway.selectorLabels` in the chart's _helpers.tpl); the in-house chart in `charts/` uses the
 * same. Assumes the Helm release is named like the spec's `metadata.name` and that the chart's
 * `name` and `labels.app`/`labels.istio` values are not overridden.
 */
export function gatewaySelectorLabels(gatewayName: string): Record<string, string> {
  return { app: gatewayName, istio: gatewayName.replace(/^istio-/, '') };
}

/**
 * The label istiod's Gateway API deployment controller puts on every pod of a Gateway, and selects
 * them by (istio/istio manifests/charts/istio-control/istio-discovery/files/kube-gateway.yaml).
 * Gateways first deployed before Istio 1.24 also keep `istio.io/gateway-name` on their pods (the
 * controller keeps their old selector), but newer ones lack it: selecting on both would miss them.
 */
export const GATEWAY_API_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';

/** The pods' labels for a Gateway API gateway (the Gateway's name), as istiod sets them. */
export function gatewayApiSelectorLabels(gatewayName: string): Record<string, string> {
  return { [GATEWAY_API_NAME_LABEL]: gatewayName };
}

/** The gateway pods' labels for what deploys them (spec.chart.kind): the chart's, or istiod's for a Gateway. */
export function podSelectorLabels(chartKind: string, gatewayName: string): Record<string, string> {
  return chartKind === 'gateway-api' ? gatewayApiSelectorLabels(gatewayName) : gatewaySelectorLabels(gatewayName);
}

/** Names of the objects gracegate adds next to the chart. Suffixes keep them apart from the chart's. */
export function objectNames(gatewayName: string): {
  hcConfigMap: string;
  healthService: string;
  disruptionBudget: string;
  monitoring: string;
  streamLimits: string;
  networkPolicy: string;
} {
  return {
    /** The EnvoyFilter with the long-lived plan's stream limits (another kind: the PDB's name can be shared). */
    streamLimits: `${gatewayName}-gracegate`,
    hcConfigMap: `${gatewayName}-gracegate-hc`,
    healthService: `${gatewayName}-gracegate-health`,
    disruptionBudget: `${gatewayName}-gracegate`,
    /** The PodMonitor and PrometheusRule (and the scrape job's name). */
    monitoring: `${gatewayName}-gracegate`,
    /** The NetworkPolicy over the sidecar's ports. */
    networkPolicy: `${gatewayName}-gracegate-hc-ports`,
  };
}

/**
 * gracegate's health Service of the gateway `gatewayName`, known by its name and the managed-by
 * label: the Service to leave out where the gateway's own Services are meant. The label alone would
 * not do: the cdk8s GracefulGateway's traffic Service carries it too.
 */
export function isHealthServiceOf(obj: Record<string, unknown>, gatewayName: string): boolean {
  const meta = asObject(obj.metadata);
  const labels = asObject(meta.labels);
  return obj.kind === 'Service' && meta.name === objectNames(gatewayName).healthService && Object.entries(MANAGED_BY_LABEL).every(([k, v]) => labels[k] === v);
}

/** Longest gateway name whose derived object names are still valid DNS labels (63 characters). */
export const MAX_GATEWAY_NAME_LENGTH = 63 - '-gracegate-health'.length;

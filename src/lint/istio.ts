import { ISTIO_DRAIN_DURATION_SECONDS, ISTIO_TERMINATION_DRAIN_SECONDS } from '../plan/timings';
import { ANNOTATIONS, statsSuffixAnnotation } from '../pod/names';
import { listAt, objAt, type LintObject, type Obj } from './objects';
import type { ContainerView, PodView } from './pod-view';
import { isObject, type Path } from '../core/json';
import { yamlValue } from '../core/yaml-input';

/**
 * How Istio's agent will drain this pod's proxy after SIGTERM, read from where Istio takes it: the
 * pod's `proxy.istio.io/config` annotation, then the mesh config's `defaultConfig` (a ConfigMap
 * `istio` / `istio-<revision>` with a `mesh` key, when the input has one), then Istio's defaults;
 * `proxyMetadata` entries, and the same names as env of the proxy container (the chart's `env`
 * value). docs/facts.md §5.
 */

/** Istio's default MINIMUM_DRAIN_DURATION with EXIT_ON_ZERO_ACTIVE_CONNECTIONS (docs/facts.md §5). */
export const ISTIO_MINIMUM_DRAIN_SECONDS = 5;

/** A setting's value and where it came from, so a finding can say which field to change. */
export type Setting<T> = { value: T; source: string; object?: LintObject; path?: Path };

export type ProxyDrain = {
  terminationDrainSeconds: Setting<number>;
  drainDurationSeconds: Setting<number>;
  exitOnZero: Setting<boolean>;
  minimumDrainSeconds: Setting<number>;
  /**
   * The stats suffixes Istio keeps for this pod: the pod's sidecar.istio.io/statsInclusionSuffixes
   * when set (then Istio ignores proxyStatsMatcher's), else proxyStatsMatcher.inclusionSuffixes.
   */
  statsInclusionSuffixes: Setting<string[]> & { viaSuffixAnnotation: boolean };
  /** The annotation, when the pod has one (its parsed value; null when it does not parse). */
  annotation?: { text: string; value: Obj | null; error?: string; path: Path };
};

const GO_DURATION = /^(?:(\d+(?:\.\d+)?)(h|m|s|ms|us|µs|ns))+$/;
const UNIT: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, µs: 1e-6, ns: 1e-9 };

/** Istio's durations: protobuf `5s` / `0.5s`, or Go's `1m30s`; a bare number is seconds. */
export function istioSeconds(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  if (!GO_DURATION.test(t)) return undefined;
  let total = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) total += Number(m[1]) * UNIT[m[2]!]!;
  return Math.round(total * 1000) / 1000;
}

/** The mesh config's defaultConfig, from an `istio` or `istio-<revision>` ConfigMap of the input. */
export function meshDefaultConfig(objects: readonly LintObject[]): { value: Obj; object: LintObject } | undefined {
  for (const o of objects) {
    if (o.kind !== 'ConfigMap' || !/^istio(-[-a-z0-9]+)?$/.test(o.name)) continue;
    const mesh = objAt(o.value, ['data']).mesh;
    if (typeof mesh !== 'string') continue;
    // A mesh config that does not parse is Istio's to refuse; lint reads the rest.
    const parsed = yamlValue(mesh);
    if ('value' in parsed && isObject(parsed.value) && isObject(parsed.value.defaultConfig)) return { value: parsed.value.defaultConfig, object: o };
  }
  return undefined;
}

function envOf(container: ContainerView | undefined, name: string): { value: string; path: Path } | undefined {
  if (!container) return undefined;
  const env = listAt(container.value, ['env']);
  const i = env.findIndex((e) => isObject(e) && e.name === name && typeof e.value === 'string');
  return i >= 0 ? { value: (env[i] as Obj).value as string, path: [...container.path, 'env', i, 'value'] } : undefined;
}

function boolOf(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === 'true';
  return undefined;
}

/**
 * The proxy drain settings of a pod. `proxy` is the container Istio runs as the proxy (its env can
 * carry the agent's variables).
 */
export function proxyDrainOf(pod: PodView, proxy: ContainerView | undefined, mesh: { value: Obj; object: LintObject } | undefined): ProxyDrain {
  const annotationPath: Path = [...pod.metaPath, 'annotations', ANNOTATIONS.proxyConfig];
  const text = pod.annotations[ANNOTATIONS.proxyConfig];
  let annotation: ProxyDrain['annotation'];
  if (typeof text === 'string') {
    const parsed = yamlValue(text);
    if ('problem' in parsed) {
      const where = parsed.problem.line === undefined ? '' : `line ${parsed.problem.line}: `;
      annotation = { text, value: null, error: `does not parse as YAML (${where}${parsed.problem.message})`, path: annotationPath };
    } else {
      annotation = isObject(parsed.value)
        ? { text, value: parsed.value, path: annotationPath }
        : { text, value: null, error: 'is not a mapping', path: annotationPath };
    }
  }
  const fromAnnotation = annotation?.value ?? {};
  const fromMesh = mesh?.value ?? {};
  const owner = pod.owner;
  const viaAnnotation = { source: `annotation ${ANNOTATIONS.proxyConfig}`, object: owner, path: annotationPath };
  const viaMesh = mesh ? { source: `mesh config defaultConfig (${mesh.object.id})`, object: mesh.object, path: ['data', 'mesh'] as Path } : undefined;

  /** A ProxyConfig duration: the annotation wins over the mesh config (Istio merges them so). */
  const duration = (key: string, fallback: number, defaultSource: string): Setting<number> => {
    const a = istioSeconds(fromAnnotation[key]);
    if (a !== undefined) return { value: a, ...viaAnnotation, source: `${viaAnnotation.source} ${key}` };
    const m = istioSeconds(fromMesh[key]);
    if (m !== undefined && viaMesh) return { value: m, ...viaMesh, source: `${viaMesh.source} ${key}` };
    return { value: fallback, source: defaultSource };
  };
  /** A proxyMetadata variable: the annotation, the mesh config, then the container's env. */
  const metadata = (name: string): Setting<string> | undefined => {
    const a = objAt(fromAnnotation, ['proxyMetadata'])[name];
    if (typeof a === 'string' || typeof a === 'number' || typeof a === 'boolean')
      return { value: String(a), ...viaAnnotation, source: `${viaAnnotation.source} proxyMetadata.${name}` };
    const e = envOf(proxy, name);
    if (e) return { value: e.value, source: `env ${name} of container ${proxy!.name}`, object: owner, path: e.path };
    const m = objAt(fromMesh, ['proxyMetadata'])[name];
    if ((typeof m === 'string' || typeof m === 'number' || typeof m === 'boolean') && viaMesh)
      return { value: String(m), ...viaMesh, source: `${viaMesh.source} proxyMetadata.${name}` };
    return undefined;
  };

  let termination = duration(
    'terminationDrainDuration',
    ISTIO_TERMINATION_DRAIN_SECONDS,
    `Istio default terminationDrainDuration ${ISTIO_TERMINATION_DRAIN_SECONDS} s (docs/facts.md §5)`,
  );
  // The agent also reads TERMINATION_DRAIN_DURATION_SECONDS; ProxyConfig's field wins when set.
  const legacy = metadata('TERMINATION_DRAIN_DURATION_SECONDS');
  if (termination.object === undefined && legacy && istioSeconds(legacy.value) !== undefined) termination = { ...legacy, value: istioSeconds(legacy.value)! };
  const exit = metadata('EXIT_ON_ZERO_ACTIVE_CONNECTIONS');
  const minimum = metadata('MINIMUM_DRAIN_DURATION');
  const suffixes = listAt(fromAnnotation, ['proxyStatsMatcher', 'inclusionSuffixes']).map(String);
  const meshSuffixes = listAt(fromMesh, ['proxyStatsMatcher', 'inclusionSuffixes']).map(String);
  // Istio reads the suffix annotation when it is not empty, and then ignores proxyStatsMatcher's.
  const suffixOverridePath: Path = [...pod.metaPath, 'annotations', ANNOTATIONS.statsInclusionSuffixes];
  const suffixOverride = statsSuffixAnnotation(objAt(pod.owner.value, [...pod.metaPath, 'annotations'])[ANNOTATIONS.statsInclusionSuffixes]);
  return {
    terminationDrainSeconds: termination,
    drainDurationSeconds: duration(
      'drainDuration',
      ISTIO_DRAIN_DURATION_SECONDS,
      `Istio default drainDuration ${ISTIO_DRAIN_DURATION_SECONDS} s (docs/facts.md §5)`,
    ),
    exitOnZero:
      exit && boolOf(exit.value) !== undefined
        ? { ...exit, value: boolOf(exit.value)! }
        : { value: false, source: 'Istio default: EXIT_ON_ZERO_ACTIVE_CONNECTIONS off' },
    minimumDrainSeconds:
      minimum && istioSeconds(minimum.value) !== undefined
        ? { ...minimum, value: istioSeconds(minimum.value)! }
        : { value: ISTIO_MINIMUM_DRAIN_SECONDS, source: `Istio default MINIMUM_DRAIN_DURATION ${ISTIO_MINIMUM_DRAIN_SECONDS} s (docs/facts.md §5)` },
    statsInclusionSuffixes:
      suffixOverride !== undefined
        ? {
            value: suffixOverride,
            source: `annotation ${ANNOTATIONS.statsInclusionSuffixes} (Istio uses it instead of proxyStatsMatcher.inclusionSuffixes: istio/istio pkg/bootstrap/config.go)`,
            object: owner,
            path: suffixOverridePath,
            viaSuffixAnnotation: true,
          }
        : suffixes.length > 0 || meshSuffixes.length === 0
          ? { value: suffixes, ...viaAnnotation, source: `${viaAnnotation.source} proxyStatsMatcher.inclusionSuffixes`, viaSuffixAnnotation: false }
          : { value: meshSuffixes, ...viaMesh!, source: `${viaMesh!.source} proxyStatsMatcher.inclusionSuffixes`, viaSuffixAnnotation: false },
    ...(annotation ? { annotation } : {}),
  };
}

/** Istio's status port (pilot-agent's /healthz/ready), which LBs probe where nothing better exists. */
export const ISTIO_STATUS_PORT = 15021;
export const ISTIO_READY_PATH = '/healthz/ready';
/** pilot-agent's port for the app probes the injector rewrites (the mesh's defaultConfig.statusPort). */
export const ISTIO_AGENT_PROBE_PORT = 15020;

const INJECT = 'sidecar.istio.io/inject';
const TEMPLATES = 'inject.istio.io/templates';
const AGENT_PORT_ANNOTATION = 'status.sidecar.istio.io/port';

/** Go's strconv.ParseBool, which Istio reads its boolean annotations with: undefined for anything else. */
export function goParseBool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v !== 'string') return undefined;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return undefined;
}

/** Whether Istio's injector will run on the pod, and what says so. */
export type Injection = { injected: boolean; why: string };

/**
 * The injector's webhook skips a pod labelled `sidecar.istio.io/inject: "false"` (its
 * objectSelector, istio/istio manifests/charts/istio-control/istio-discovery/templates/mutatingwebhook.yaml),
 * as istiod's Gateway API pods are; it runs on a pod labelled (or, deprecated, annotated) "true",
 * one naming `inject.istio.io/templates` (istio/gateway's `gateway` template), one whose proxy image
 * is `auto` (the chart's: only the injector fills it in), or one in a namespace of the input
 * labelled `istio-injection: enabled` or `istio.io/rev`.
 */
export function injectionOf(pod: PodView, proxy: ContainerView | undefined, namespaces: readonly LintObject[]): Injection {
  const label = pod.labels[INJECT];
  const annotation = pod.annotations[INJECT];
  if (label === 'false' || annotation === 'false') return { injected: false, why: `the pod's ${INJECT}: "false"` };
  if (label === 'true') return { injected: true, why: `the pod's label ${INJECT}: "true"` };
  if (annotation === 'true') return { injected: true, why: `the pod's annotation ${INJECT}: "true"` };
  if (typeof pod.annotations[TEMPLATES] === 'string')
    return { injected: true, why: `the pod's annotation ${TEMPLATES}: ${String(pod.annotations[TEMPLATES])}` };
  if (proxy?.image === 'auto') return { injected: true, why: `${proxy.name}'s image: auto, which only the injector fills in` };
  const ns = namespaces.find((n) => n.name === pod.owner.namespace);
  if (ns && (ns.labels['istio-injection'] === 'enabled' || typeof ns.labels['istio.io/rev'] === 'string'))
    return { injected: true, why: `${ns.id} is labelled for injection` };
  return { injected: false, why: 'nothing in the input asks for Istio injection' };
}

/**
 * The mesh-wide `sidecarInjectorWebhook.rewriteAppHTTPProbe` (default true), from the injector's
 * ConfigMap (`istio-sidecar-injector[-<revision>]`, key `values`) when the input has it.
 */
export function injectorRewritesProbes(configMaps: readonly LintObject[]): Setting<boolean> {
  for (const o of configMaps) {
    if (!/^istio-sidecar-injector(-[-a-z0-9]+)?$/.test(o.name)) continue;
    const values = objAt(o.value, ['data']).values;
    if (typeof values !== 'string') continue;
    // The injector refuses values that do not parse; lint reads the default.
    const parsed = yamlValue(values);
    const v = 'value' in parsed ? objAt(parsed.value, ['sidecarInjectorWebhook']).rewriteAppHTTPProbe : undefined;
    if (typeof v === 'boolean') return { value: v, source: `${o.id} values sidecarInjectorWebhook.rewriteAppHTTPProbe`, object: o, path: ['data', 'values'] };
  }
  return { value: true, source: "Istio's default sidecarInjectorWebhook.rewriteAppHTTPProbe: true" };
}

/**
 * Whether the injector rewrites the app probes of this pod's containers to pilot-agent
 * (istio/istio pkg/kube/inject/app_probe.go ShouldRewriteAppHTTPProbers: the pod's
 * `sidecar.istio.io/rewriteAppHTTPProbers` annotation, read with ParseBool, over the mesh's
 * setting), and the agent port they go to (`status.sidecar.istio.io/port`, else 15020).
 */
export function probeRewriteOf(pod: PodView, mesh: Setting<boolean>): Setting<boolean> & { agentPort: number } {
  const raw = pod.annotations[ANNOTATIONS.rewriteAppHttpProbers];
  const parsed = goParseBool(raw);
  const portRaw = pod.annotations[AGENT_PORT_ANNOTATION];
  const agentPort = typeof portRaw === 'string' && /^\d+$/.test(portRaw) ? Number(portRaw) : ISTIO_AGENT_PROBE_PORT;
  if (parsed !== undefined)
    return {
      value: parsed,
      source: `the pod's annotation ${ANNOTATIONS.rewriteAppHttpProbers}: "${String(raw)}"`,
      object: pod.owner,
      path: [...pod.metaPath, 'annotations', ANNOTATIONS.rewriteAppHttpProbers],
      agentPort,
    };
  return {
    ...mesh,
    ...(raw !== undefined
      ? { source: `${mesh.source} (the pod's ${ANNOTATIONS.rewriteAppHttpProbers}: ${JSON.stringify(raw)} is not a Go boolean, so Istio ignores it)` }
      : {}),
    agentPort,
  };
}

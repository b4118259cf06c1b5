import type { Container, K8sObject } from './k8s';
import { cpuMetric } from './k8s-shapes';
import type { PodChanges } from './pod-changes';
import { ANNOTATIONS, statsSuffixAnnotation } from './names';
import { GracegateError } from '../core/errors';
import { isObject } from '../core/json';

/** A workload the pod changes cannot be applied to (no pod template, no proxy container). */
export class ApplyPodChangesError extends GracegateError {}

type AnyObject = Record<string, unknown>;

export function objectAt(parent: AnyObject, key: string): AnyObject {
  const v = parent[key];
  if (v === undefined || v === null) {
    const fresh: AnyObject = {};
    parent[key] = fresh;
    return fresh;
  }
  if (!isObject(v)) throw new ApplyPodChangesError(`'${key}' is not an object`);
  return v;
}

/** Replaces the entries whose name matches, appends the others: applying twice changes nothing. */
export function upsertByName<T extends { name: string }>(list: unknown, items: T[]): unknown[] {
  const out = Array.isArray(list) ? [...list] : [];
  for (const item of items) {
    const at = out.findIndex((e) => isObject(e) && e.name === item.name);
    if (at >= 0) out[at] = structuredClone(item);
    else out.push(structuredClone(item));
  }
  return out;
}

/** The list without the entry named `name`; undefined when there was no list. */
function withoutName(list: unknown, name: string): unknown[] | undefined {
  return Array.isArray(list) ? list.filter((e) => !(isObject(e) && e.name === name)) : undefined;
}

export type ApplyOptions = {
  /**
   * Set `spec.replicas` to the spec's fixed count. @default true. Without effect when the spec
   * autoscales: then `spec.replicas` is always removed, since an HPA owns the count and a rendered
   * count would reset it at every apply (Kubernetes' HPA docs, "Migrating Deployments and
   * StatefulSets to horizontal autoscaling").
   */
  setReplicas?: boolean;
};

/**
 * Applies the pod changes to a Deployment (or any workload with `spec.template`) given as JSON,
 * returning a new object: the sidecar added (or replaced, by name), the proxy container held, the
 * volumes, grace period, strategy, minReadySeconds, anti-affinity and pod annotations set. Fields gracegate does not
 * own are kept. This is the one implementation of "put the pod changes into a rendered workload",
 * for the constructs and the post-renderer alike; the values overlays express the same through
 * chart keys, and tests check the two agree.
 */
export function applyPodChanges(workload: K8sObject, changes: PodChanges, options: ApplyOptions = {}): K8sObject {
  const out = structuredClone(workload) as K8sObject & AnyObject;
  const where = `${out.kind}/${out.metadata?.name ?? '?'}`;
  const spec = objectAt(out, 'spec');
  if (!isObject(spec.template)) throw new ApplyPodChangesError(`${where} has no spec.template`);
  if (changes.autoscaler) delete spec.replicas;
  else if ((options.setReplicas ?? true) && changes.replicas !== null) spec.replicas = changes.replicas;
  if (out.kind === 'Deployment') {
    spec.strategy = structuredClone(changes.strategy);
    spec.minReadySeconds = changes.minReadySeconds;
  }

  const template = spec.template as AnyObject;
  const meta = objectAt(template, 'metadata');
  meta.annotations = { ...(isObject(meta.annotations) ? meta.annotations : {}), ...changes.podAnnotations };
  // A pod that names its stats suffixes in sidecar.istio.io/statsInclusionSuffixes makes Istio ignore
  // proxyStatsMatcher's: the sidecar's suffixes go into that list too, or it cannot count.
  const listed = statsSuffixAnnotation((meta.annotations as AnyObject)[ANNOTATIONS.statsInclusionSuffixes]);
  if (listed !== undefined) {
    (meta.annotations as AnyObject)[ANNOTATIONS.statsInclusionSuffixes] = [
      ...listed,
      ...changes.statsInclusionSuffixes.filter((s) => !listed.includes(s)),
    ].join(',');
  }

  const pod = objectAt(template, 'spec');
  pod.terminationGracePeriodSeconds = changes.terminationGracePeriodSeconds;
  if (changes.affinity) {
    const affinity = objectAt(pod, 'affinity');
    affinity.podAntiAffinity = structuredClone(changes.affinity.podAntiAffinity);
  }
  pod.volumes = upsertByName(pod.volumes, changes.volumes);
  if (changes.imagePullSecrets.length > 0) pod.imagePullSecrets = upsertByName(pod.imagePullSecrets, changes.imagePullSecrets);

  const containers = Array.isArray(pod.containers) ? pod.containers : [];
  const proxyAt = containers.findIndex((c) => isObject(c) && c.name === changes.proxy.containerName);
  if (proxyAt < 0) throw new ApplyPodChangesError(`${where} has no container '${changes.proxy.containerName}' to hold (spec.envoy.containerName)`);
  const proxy = structuredClone(containers[proxyAt]) as AnyObject;
  proxy.lifecycle = { ...(isObject(proxy.lifecycle) ? proxy.lifecycle : {}), ...structuredClone(changes.proxy.lifecycle) };
  const withProxy = [...containers];
  withProxy[proxyAt] = proxy;
  // The sidecar goes into its list (native: initContainers) and out of the other, so switching
  // kinds, or running twice, leaves exactly one.
  const other = changes.hcPlacement === 'containers' ? 'initContainers' : 'containers';
  pod.containers = withProxy;
  const rest = withoutName(pod[other], changes.hcContainer.name);
  if (rest !== undefined && rest.length !== (pod[other] as unknown[]).length) {
    if (rest.length === 0) delete pod[other];
    else pod[other] = rest;
  }
  pod[changes.hcPlacement] = upsertByName<Container>(pod[changes.hcPlacement], [changes.hcContainer]);
  return out;
}

/**
 * Maps merge key by key; anything else (lists included) is replaced: how Helm merges values and
 * how a strategic merge treats the HPA's behavior (its policy lists have no merge key).
 */
function mergeMaps(base: unknown, over: AnyObject): AnyObject {
  const out: AnyObject = isObject(base) ? structuredClone(base) : {};
  for (const [k, v] of Object.entries(over)) out[k] = isObject(v) ? mergeMaps(out[k], v) : structuredClone(v);
  return out;
}

/**
 * Gives a rendered HorizontalPodAutoscaler (the chart's) the plan's range, and the spec's target
 * and behaviour where it has them, as the values overlay does through the chart's values: the
 * behaviour merges into the rendered one, the CPU target replaces only the CPU metric. Every other
 * field is kept. Applying twice changes nothing.
 */
export function applyAutoscaler(hpa: K8sObject, changes: PodChanges): K8sObject {
  const a = changes.autoscaler;
  if (!a) throw new ApplyPodChangesError(`${hpa.kind}/${hpa.metadata?.name ?? '?'}: the spec has a fixed replica count, no autoscaler to apply`);
  const out = structuredClone(hpa) as K8sObject & AnyObject;
  const spec = objectAt(out, 'spec');
  spec.minReplicas = a.minReplicas;
  spec.maxReplicas = a.maxReplicas;
  if (a.behavior) spec.behavior = mergeMaps(spec.behavior, a.behavior as AnyObject);
  if (a.targetCPUUtilizationPercentage !== undefined) {
    const cpu = cpuMetric(a.targetCPUUtilizationPercentage);
    const metrics = Array.isArray(spec.metrics) ? [...spec.metrics] : [];
    const at = metrics.findIndex((m) => isObject(m) && m.type === 'Resource' && isObject(m.resource) && m.resource.name === 'cpu');
    if (at >= 0) metrics[at] = cpu;
    else metrics.unshift(cpu);
    spec.metrics = metrics;
  }
  return out;
}

import type { Container, K8sObject } from './k8s';
import type { PodChanges } from './pod-changes';
import { GracegateError } from '../errors';

/** A workload the pod changes cannot be applied to (no pod template, no proxy container). */
export class ApplyPodChangesError extends GracegateError {}

type AnyObject = Record<string, unknown>;

export function isObject(v: unknown): v is AnyObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

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

export type ApplyOptions = {
  /**
   * Set `spec.replicas` from the spec. @default true. Turn off when an HPA owns the replica
   * count (the rollout plan then assumes the spec's replicas as the typical count).
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
  if (options.setReplicas ?? true) spec.replicas = changes.replicas;
  if (out.kind === 'Deployment') {
    spec.strategy = structuredClone(changes.strategy);
    spec.minReadySeconds = changes.minReadySeconds;
  }

  const template = spec.template as AnyObject;
  const meta = objectAt(template, 'metadata');
  meta.annotations = { ...(isObject(meta.annotations) ? meta.annotations : {}), ...changes.podAnnotations };

  const pod = objectAt(template, 'spec');
  pod.terminationGracePeriodSeconds = changes.terminationGracePeriodSeconds;
  if (changes.affinity) {
    const affinity = objectAt(pod, 'affinity');
    affinity.podAntiAffinity = structuredClone(changes.affinity.podAntiAffinity);
  }
  pod.volumes = upsertByName(pod.volumes, changes.volumes);

  const containers = Array.isArray(pod.containers) ? pod.containers : [];
  const proxyAt = containers.findIndex((c) => isObject(c) && c.name === changes.proxy.containerName);
  if (proxyAt < 0) throw new ApplyPodChangesError(`${where} has no container '${changes.proxy.containerName}' to hold (spec.envoy.containerName)`);
  const proxy = structuredClone(containers[proxyAt]) as AnyObject;
  proxy.lifecycle = { ...(isObject(proxy.lifecycle) ? proxy.lifecycle : {}), ...structuredClone(changes.proxy.lifecycle) };
  const withProxy = [...containers];
  withProxy[proxyAt] = proxy;
  pod.containers = upsertByName<Container>(withProxy, [changes.hcContainer]);
  return out;
}

import { isDeepStrictEqual } from 'node:util';
import { isObject, type Path } from '../../core/json';
import type { K8sObject } from '../../pod';
import type { PodChanges } from '../../pod/pod-changes';
import { at, listAt, objAt, type LintObject } from '../objects';

/**
 * Comparing the plan with objects read back from the API server (`kubectl get -o yaml`,
 * `gracegate lint --cluster`). The server fills in defaults beside every field the plan sets
 * (a container's terminationMessagePath and imagePullPolicy, a probe's timeoutSeconds and
 * failureThreshold, an httpGet's scheme, a port's protocol, a volume's defaultMode, a Service
 * port's targetPort and nodePort), and Istio's injector adds its own containers, volumes, labels
 * and annotations to the pods. None of that is a drift: on a live object lint compares only what
 * the plan sets, leaf by leaf, and names each planned field that is missing or holds another value
 * by its path, with the planned and the live value. Lists of named entries (containers, volumes,
 * ports, env) are matched by name; other lists are compared entry by entry and must have the
 * plan's length.
 */

/** An object the API server has stored: it has a uid, a resourceVersion or a creationTimestamp, which no rendered manifest carries. */
export function isLive(o: LintObject): boolean {
  const meta = at(o.value, ['metadata']);
  return isObject(meta) && (typeof meta.uid === 'string' || typeof meta.resourceVersion === 'string' || typeof meta.creationTimestamp === 'string');
}

export type LiveDifference = { path: Path; planned: unknown; live: unknown };

const named = (v: unknown): v is Record<string, unknown> & { name: string } => isObject(v) && typeof v.name === 'string';

/** Where `live` (at `path` of its object) does not carry what `planned` sets; extra live keys and named entries are the server's or the injector's. */
export function liveDifferences(planned: unknown, live: unknown, path: Path): LiveDifference[] {
  if (planned === undefined) return [];
  if (isObject(planned)) {
    if (!isObject(live)) return [{ path, planned, live }];
    return Object.entries(planned).flatMap(([k, v]) => liveDifferences(v, live[k], [...path, k]));
  }
  if (Array.isArray(planned) && planned.length > 0 && planned.every(named)) {
    if (!Array.isArray(live)) return [{ path, planned, live }];
    return planned.flatMap((entry) => {
      const i = live.findIndex((l) => named(l) && l.name === entry.name);
      return i < 0 ? [{ path: [...path, live.length], planned: entry, live: undefined }] : liveDifferences(entry, live[i], [...path, i]);
    });
  }
  if (Array.isArray(planned)) {
    if (!Array.isArray(live) || live.length !== planned.length) return [{ path, planned, live }];
    return planned.flatMap((entry, i) => liveDifferences(entry, live[i], [...path, i]));
  }
  // The server keeps an int-or-string as it was given: 1 and "1" are different values.
  return isDeepStrictEqual(planned, live) ? [] : [{ path, planned, live }];
}

/**
 * The live Pods of a workload of the input: Pods in its namespace that an owner reference ties to
 * a controller and whose labels its selector picks (a Deployment's through its ReplicaSets).
 */
export function ownedPods(objects: readonly LintObject[], owner: LintObject, matches: (pod: LintObject) => boolean): LintObject[] {
  return objects.filter(
    (o) =>
      o.kind === 'Pod' &&
      o.namespace === owner.namespace &&
      Array.isArray(at(o.value, ['metadata', 'ownerReferences'])) &&
      (at(o.value, ['metadata', 'ownerReferences']) as unknown[]).length > 0 &&
      matches(o),
  );
}

/**
 * The pod fields the plan sets, as a partial Pod, from the expected workload's template: the
 * plan's pod annotations, grace period, anti-affinity, volumes and sidecar, and the proxy's hold.
 */
export function plannedPod(expected: K8sObject, changes: PodChanges): Record<string, unknown> {
  const template = objAt(expected, ['spec', 'template']);
  const spec = objAt(template, ['spec']);
  const annotations = objAt(template, ['metadata', 'annotations']);
  const byName = (list: string, names: string[]) => listAt(spec, [list]).filter((e) => isObject(e) && names.includes(String(e.name)));
  const proxy = listAt(spec, ['containers']).find((c) => isObject(c) && c.name === changes.proxy.containerName);
  const preStop = isObject(proxy) ? at(proxy, ['lifecycle', 'preStop']) : undefined;
  const hc = changes.hcContainer.name;
  const containers = [...byName('containers', [hc]), ...(preStop !== undefined ? [{ name: changes.proxy.containerName, lifecycle: { preStop } }] : [])];
  const initContainers = byName('initContainers', [hc]);
  const volumes = byName(
    'volumes',
    changes.volumes.map((v) => v.name),
  );
  const anti = at(spec, ['affinity', 'podAntiAffinity']);
  return {
    metadata: { annotations: Object.fromEntries(Object.keys(changes.podAnnotations).map((k) => [k, annotations[k]])) },
    spec: {
      terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds,
      ...(anti !== undefined && changes.affinity ? { affinity: { podAntiAffinity: anti } } : {}),
      ...(volumes.length > 0 ? { volumes } : {}),
      ...(containers.length > 0 ? { containers } : {}),
      ...(initContainers.length > 0 ? { initContainers } : {}),
    },
  };
}

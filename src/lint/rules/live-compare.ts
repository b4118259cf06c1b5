import { isDeepStrictEqual } from 'node:util';
import { isObject, type Path } from '../../core/json';
import { at, type LintObject } from '../objects';

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

/** A path of a workload's pod template as the same field of one of its Pods. */
export function podPathOf(templatePath: Path): Path | undefined {
  if (templatePath[0] !== 'spec' || templatePath[1] !== 'template') return undefined;
  return templatePath.slice(2);
}

import { isObject } from './json';

/**
 * What keeps a document from being a Kubernetes object: not a map at all, or the fields it lacks
 * (apiVersion, kind, metadata.name or generateName). `lists`: whether a `kind: List` (what
 * `kubectl get -o yaml` prints, read by lint) may go without a name of its own; post-render reads
 * a List's items one by one, and refuses a List among them.
 */
export function kubernetesObjectProblem(v: unknown, lists: 'accepted' | 'refused'): { notAMap: string } | { missing: string[] } | null {
  if (!isObject(v)) return { notAMap: `is a ${Array.isArray(v) ? 'list' : typeof v}, not a Kubernetes object` };
  const missing = ['apiVersion', 'kind'].filter((k) => typeof v[k] !== 'string' || v[k] === '');
  const meta = v.metadata;
  const named = isObject(meta) && (typeof meta.name === 'string' || typeof meta.generateName === 'string');
  if (!named && !(lists === 'accepted' && v.kind === 'List')) missing.push('metadata.name');
  return missing.length > 0 ? { missing } : null;
}

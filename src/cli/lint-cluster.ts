import { spawnSync } from 'node:child_process';
import { MANIFESTS_MAX_BYTES } from '../core/bounded-read';
import { GracegateError } from '../core/errors';
import { isObject } from '../core/json';
import { readManifests, type ManifestDocument } from '../lint/manifests';
import { HC_CONFIG_VOLUME } from '../pod/names';
import { findTool } from './find-tool';

/**
 * `gracegate lint --cluster`: the objects lint reads, from the API server, through the user's own
 * kubectl, read-only (`kubectl get … -o yaml`, nothing else). kubectl rather than an HTTPS client
 * of gracegate's own: it is what reads a kubeconfig the way its users expect (contexts, exec and
 * OIDC credential plugins, proxies, certificate files), and gracegate then needs no Kubernetes
 * client dependency. Each kind is read on its own, so a kind the user may not list is named
 * (`unread`) while the others are still linted.
 */

export type ClusterOptions = {
  kubeconfig?: string;
  context?: string;
  /** One namespace, or every namespace. */
  namespace?: string;
  /** Where istiod keeps its mesh and injector ConfigMaps. @default istio-system */
  istioNamespace?: string;
};

export type ClusterRead = { docs: ManifestDocument[]; unread: string[]; read: string[] };

/** What lint reads, each kind with the resource name kubectl is given (group-qualified where core has a namesake). */
export const CLUSTER_KINDS = [
  'deployments.apps',
  'statefulsets.apps',
  'daemonsets.apps',
  'pods',
  'services',
  'poddisruptionbudgets.policy',
  'horizontalpodautoscalers.autoscaling',
  'namespaces',
  'envoyfilters.networking.istio.io',
  // synth's NetworkPolicy over the sidecar's ports is part of the plan (--spec names it missing otherwise).
  'networkpolicies.networking.k8s.io',
] as const;

/** istiod's ConfigMaps that say how the mesh drains and whether the injector rewrites probes. */
const ISTIO_CONFIGMAPS = ['istio', 'istio-sidecar-injector'];

const TIMEOUT_MS = 60_000;

type Get = { ok: true; text: string } | { ok: false; why: string; absentKind: boolean };

function kubectlGet(o: ClusterOptions, args: string[]): Get {
  const kubectl = findTool('kubectl', 'GRACEGATE_KUBECTL');
  const global = [...(o.kubeconfig ? ['--kubeconfig', o.kubeconfig] : []), ...(o.context ? ['--context', o.context] : [])];
  const r = spawnSync(kubectl, [...global, 'get', ...args, '-o', 'yaml', '--request-timeout=30s'], {
    encoding: 'utf8',
    maxBuffer: MANIFESTS_MAX_BYTES,
    timeout: TIMEOUT_MS,
  });
  if (r.error) {
    const e = r.error as NodeJS.ErrnoException;
    if (e.code === 'ENOBUFS')
      throw new GracegateError(`kubectl get ${args.join(' ')}: more than ${MANIFESTS_MAX_BYTES} bytes; lint one namespace at a time (--namespace)`);
    throw new GracegateError(`kubectl get ${args.join(' ')}: ${e.code === 'ETIMEDOUT' ? `no answer within ${TIMEOUT_MS / 1000} s` : e.message}`);
  }
  if (r.status === 0) return { ok: true, text: r.stdout };
  const why = r.stderr.trim().split('\n').slice(-3).join(' ');
  if (/forbidden/i.test(why)) return { ok: false, why, absentKind: false };
  if (/doesn't have a resource type|the server could not find the requested resource/i.test(why)) return { ok: false, why, absentKind: true };
  // Anything else (no server, bad credentials, a context that does not exist) stops the lint.
  throw new GracegateError(`kubectl ${[...global, 'get', ...args].join(' ')} failed: ${why || `exit ${r.status}`}`);
}

/** The ConfigMaps the gateways' hc sidecars read (by the volume gracegate gives them), per namespace. */
function hcConfigMaps(docs: ManifestDocument[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const visit = (o: unknown) => {
    if (!isObject(o)) return;
    if (Array.isArray(o.items)) for (const i of o.items) visit(i);
    const meta = isObject(o.metadata) ? o.metadata : {};
    const template = isObject(o.spec) && isObject(o.spec.template) ? o.spec.template : o;
    const spec = isObject(template.spec) ? template.spec : {};
    for (const v of Array.isArray(spec.volumes) ? spec.volumes : []) {
      if (isObject(v) && v.name === HC_CONFIG_VOLUME && isObject(v.configMap) && typeof v.configMap.name === 'string' && typeof meta.namespace === 'string') {
        const set = out.get(meta.namespace) ?? new Set<string>();
        set.add(v.configMap.name);
        out.set(meta.namespace, set);
      }
    }
  };
  for (const d of docs) visit(d.value);
  return out;
}

/** Reads every kind lint needs; a kind the user may not read (RBAC) is named in `unread`, with kubectl's words. */
export function readCluster(o: ClusterOptions, extraConfigMaps: Array<{ namespace: string; name: string }> = []): ClusterRead {
  const scope = o.namespace ? ['-n', o.namespace] : ['--all-namespaces'];
  const docs: ManifestDocument[] = [];
  const unread: string[] = [];
  const read: string[] = [];
  const take = (what: string, args: string[], optionalKind = false) => {
    const r = kubectlGet(o, args);
    if (r.ok) {
      docs.push(...readManifests(r.text, `cluster: kubectl get ${args.join(' ')}`));
      read.push(what);
    } else if (!(optionalKind && r.absentKind)) unread.push(`${what}: ${r.why}`);
  };
  for (const kind of CLUSTER_KINDS) {
    if (kind === 'namespaces') take(kind, o.namespace ? ['namespace', o.namespace] : ['namespaces']);
    else take(kind, [kind, ...scope], kind === 'envoyfilters.networking.istio.io');
  }
  const istioNs = o.istioNamespace ?? 'istio-system';
  take(`configmaps ${ISTIO_CONFIGMAPS.join(', ')} in ${istioNs}`, ['configmaps', ...ISTIO_CONFIGMAPS, '-n', istioNs, '--ignore-not-found']);
  const wanted = hcConfigMaps(docs);
  for (const { namespace, name } of extraConfigMaps) wanted.set(namespace, (wanted.get(namespace) ?? new Set()).add(name));
  for (const [ns, names] of [...wanted].sort(([a], [b]) => a.localeCompare(b)))
    take(`configmaps ${[...names].sort().join(', ')} in ${ns}`, ['configmaps', ...[...names].sort(), '-n', ns, '--ignore-not-found']);
  return { docs, unread, read };
}

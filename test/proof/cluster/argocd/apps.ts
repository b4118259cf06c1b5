/**
 * Argo CD Applications on the test cluster: their manifests, their status as the application
 * controller writes it, a refresh (what Argo CD's CLI and its git webhook do after a push), and
 * what the controller applied, to hold to `gracegate argocd generate` run on the same checkout.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../../../support/repo';
import { argoCdEnv, type Param } from '../../../delivery/argocd-env';
import { kubectl, kubectlJson } from '../kubectl';
import { waitUntil } from '../sh';
import { ARGOCD_NAMESPACE } from './install';

export type AppSource = {
  /** The Application's name in the argocd namespace. */
  name: string;
  /** Where the gateway goes (the spec's metadata.namespace). */
  namespace: string;
  /** The app directory in the repository. */
  path: string;
  /** By name (`spec.source.plugin.name`) with these parameters; absent: found by discovery, no plugin block. */
  plugin?: { name: string; parameters: Param[] };
};

export function applicationManifest(a: AppSource, repoURL: string, targetRevision: string): Record<string, unknown> {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: a.name, namespace: ARGOCD_NAMESPACE },
    spec: {
      project: 'default',
      source: { repoURL, targetRevision, path: a.path, ...(a.plugin ? { plugin: a.plugin } : {}) },
      destination: { server: 'https://kubernetes.default.svc', namespace: a.namespace },
      syncPolicy: { automated: { prune: true, selfHeal: true } },
    },
  };
}

export type AppStatus = {
  sync?: { status?: string; revision?: string };
  health?: { status?: string };
  conditions?: Array<{ type: string; message: string }>;
  operationState?: { phase?: string; message?: string; syncResult?: { revision?: string } };
  resources?: Array<{ group?: string; version?: string; kind: string; namespace?: string; name: string; status?: string }>;
  reconciledAt?: string;
};

export function appStatus(name: string): AppStatus {
  return kubectlJson<{ status?: AppStatus }>(['-n', ARGOCD_NAMESPACE, 'get', 'application', name]).status ?? {};
}

export const describeApp = (s: AppStatus): string =>
  `sync ${s.sync?.status ?? '-'} at ${s.sync?.revision?.slice(0, 8) ?? '-'}, health ${s.health?.status ?? '-'}, last sync ${s.operationState?.phase ?? '-'} at ${s.operationState?.syncResult?.revision?.slice(0, 8) ?? '-'} (${s.operationState?.message ?? ''}); conditions: ${JSON.stringify(s.conditions ?? [])}`;

/** Asks the controller to compare with git now (the annotation `argocd app get --refresh` sets). */
export function refresh(name: string): void {
  kubectl(['-n', ARGOCD_NAMESPACE, 'annotate', 'application', name, 'argocd.argoproj.io/refresh=normal', '--overwrite']);
}

/** Synced and Healthy at `revision`, its last sync having succeeded there. */
export const isSyncedHealthyAt = (s: AppStatus, revision: string): boolean =>
  s.sync?.status === 'Synced' &&
  s.sync.revision === revision &&
  s.health?.status === 'Healthy' &&
  s.operationState?.phase === 'Succeeded' &&
  s.operationState.syncResult?.revision === revision;

/** Waits until the Application is Synced and Healthy at `revision`, its last sync having succeeded there. */
export async function waitSyncedHealthy(name: string, revision: string, timeoutMs = 240_000): Promise<AppStatus> {
  let last: AppStatus = {};
  try {
    return await waitUntil(
      `Application ${name} Synced and Healthy at ${revision.slice(0, 8)}`,
      timeoutMs,
      () => {
        last = appStatus(name);
        return isSyncedHealthyAt(last, revision) ? last : undefined;
      },
      1000,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last seen: ${describeApp(last)}`);
  }
}

type Obj = Record<string, any>;
export const objects = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null && typeof o === 'object');

/** The Kubernetes version as Argo CD hands it to a plugin: the API server's major.minor, parsed as a version (KUBE_VERSION). */
export function kubeVersionForPlugins(): string {
  const v = kubectlJson<{ serverVersion: { major: string; minor: string } }>(['version']).serverVersion;
  return `${v.major}.${v.minor.replace(/\D.*$/, '')}.0`;
}

/**
 * `gracegate argocd generate` in the app directory of the same checkout, with the environment the
 * CMP server gives it for this Application (test/delivery/argocd-env.ts builds it as Argo CD's
 * source does): stdout, stderr and the exit status.
 */
export function localGenerate(
  checkout: string,
  a: AppSource,
  revision: string,
  repoURL: string,
  kubeVersion: string,
): { status: number | null; stdout: string; stderr: string } {
  const env: NodeJS.ProcessEnv = {
    PATH: [join(REPO_ROOT, '.cache/tools/v31/helm'), process.env.PATH ?? '/usr/bin:/bin'].join(':'),
    HOME: process.env.HOME,
    ...argoCdEnv(a.plugin ? { parameters: a.plugin.parameters } : undefined),
    ARGOCD_APP_NAME: a.name,
    ARGOCD_APP_NAMESPACE: a.namespace,
    ARGOCD_APP_REVISION: revision,
    ARGOCD_APP_REVISION_SHORT: revision.slice(0, 7),
    ARGOCD_APP_REVISION_SHORT_8: revision.slice(0, 8),
    ARGOCD_APP_SOURCE_PATH: a.path,
    ARGOCD_APP_SOURCE_REPO_URL: repoURL,
    KUBE_VERSION: kubeVersion,
  };
  // Argo CD bounds a plugin command by 90 s (ARGOCD_EXEC_TIMEOUT): the same bound here.
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'argocd', 'generate'], {
    cwd: join(checkout, a.path),
    env,
    encoding: 'utf8',
    timeout: 90_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Argo CD's resource tracking annotation (v3's default tracking method), which it adds to every object it applies. */
export const TRACKING_ANNOTATION = 'argocd.argoproj.io/tracking-id';

/**
 * What the controller applied for each generated object: its live `kubectl.kubernetes.io/last-applied-configuration`
 * (Argo CD syncs with client-side apply, which records the manifest it sent), without the
 * tracking annotation Argo CD adds. Missing objects come back as null.
 */
export function appliedManifest(o: Obj, defaultNamespace: string): Obj | null {
  const ns = o.metadata?.namespace ?? defaultNamespace;
  const kind = `${o.kind}.${(o.apiVersion as string).includes('/') ? (o.apiVersion as string).split('/')[0] : ''}`.replace(/\.$/, '');
  const live = kubectl(['-n', ns, 'get', kind, o.metadata.name, '--ignore-not-found', '-o', 'json']).trim();
  if (live === '') return null;
  const text = (JSON.parse(live) as Obj).metadata?.annotations?.['kubectl.kubernetes.io/last-applied-configuration'];
  if (typeof text !== 'string') return null;
  const applied = JSON.parse(text) as Obj;
  const annotations = applied.metadata?.annotations as Record<string, string> | undefined;
  if (annotations) {
    delete annotations[TRACKING_ANNOTATION];
    // Where the object had none, the annotation Argo CD added was the only one.
    if (Object.keys(annotations).length === 0 && o.metadata?.annotations === undefined) delete applied.metadata.annotations;
  }
  return applied;
}

/**
 * A generated object as Argo CD applies it: in the Application's destination namespace when it
 * names none (gitops-engine sets it on namespaced objects; every object the plugin prints is one).
 */
export function asApplied(o: Obj, destination: string): Obj {
  return o.metadata?.namespace === undefined ? { ...o, metadata: { ...o.metadata, namespace: destination } } : o;
}

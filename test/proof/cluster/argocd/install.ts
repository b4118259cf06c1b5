/**
 * A real Argo CD v3.2.12 on the test cluster, installed the way Argo CD's docs install "Argo CD
 * Core" (its own manifests/core-install.yaml: the CRDs, the application controller, the
 * ApplicationSet controller, the repo server and Redis; no API server, UI, Dex or notifications),
 * with gracegate's CMP sidecar added the way gracegate's README tells a user to. Built from the Go
 * module proxy (scripts/argocd/build.sh, images.sh), nothing pulled.
 *
 * What differs from Argo CD's manifests, and why:
 *   - image references: quay.io/argoproj/argocd:v3.2.12 becomes the image built here from the same
 *     release (gracegate.invalid/argocd/argocd:v3.2.12), Redis 8.2 from Alpine becomes Debian's
 *     redis-server, and `imagePullPolicy: Always` becomes IfNotPresent: nothing is pulled here;
 *   - the AppProject `default`, which argocd-server creates at its start (server/server.go,
 *     initializeDefaultProject) and core-install has no argocd-server to create, is applied as that
 *     function writes it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../../support/repo';
import { sidecarArchive } from '../cluster';
import { clusterArchives, importImages, type ImageArchive } from '../images';
import { deleteNamespacesNow, kubectl } from '../kubectl';
import { NODES } from '../layout';
import { ClusterError, waitUntil } from '../sh';

export const ARGOCD_VERSION = 'v3.2.12';
export const ARGOCD_NAMESPACE = 'argocd';
const UPSTREAM_IMAGE = `quay.io/argoproj/argocd:${ARGOCD_VERSION}`;
const UPSTREAM_REDIS = /public\.ecr\.aws\/docker\/library\/redis:[0-9.]+-alpine/g;

export type ArgoCdBuilt = { bin: string; images: ImageArchive[] };

function script(path: string, args: string[] = []): string {
  const res = spawnSync('nice', ['-n', '10', 'bash', join(REPO_ROOT, path), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 40 * 60_000,
  });
  if (res.status !== 0) throw new ClusterError(`${path} failed (exit ${res.status ?? res.signal})`);
  return res.stdout.trim().split('\n').pop()!;
}

/** Argo CD's binary and images, built if missing (the test run's cluster track built them already). */
export function argoCdBuilt(): ArgoCdBuilt {
  const bin = script('scripts/argocd/build.sh');
  return { bin, images: clusterArchives(script('scripts/argocd/images.sh', [bin])) };
}

/** gracegate's CMP image from `npm run image` (built with the sidecar image), under plugins/argocd's reference. */
export function cmpArchive(): ImageArchive {
  const sidecar = sidecarArchive();
  const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  return { ref: `ghcr.io/gracegate/gracegate-cmp:${version}`, file: sidecar.file.replace(/gracegate\.oci\.tar$/, 'gracegate-cmp.oci.tar') };
}

export async function importArgoCdImages(built: ArgoCdBuilt): Promise<void> {
  const images = [...built.images, cmpArchive()];
  await Promise.all(NODES.map((node) => importImages(node, images)));
}

/** core-install.yaml of the module, with the image changes above; every one of them must apply. */
export function coreInstall(built: ArgoCdBuilt): string {
  const text = readFileSync(join(built.bin, 'manifests', 'core-install.yaml'), 'utf8');
  const ref = (name: string): string => {
    const image = built.images.find((i) => i.ref.startsWith(`gracegate.invalid/argocd/${name}:`));
    if (!image) throw new ClusterError(`no ${name} image among ${built.images.map((i) => i.ref).join(', ')}`);
    return image.ref;
  };
  const count = (re: RegExp | string): number => text.split(re).length - 1;
  if (count(UPSTREAM_IMAGE) === 0 || count(UPSTREAM_REDIS) === 0 || count('imagePullPolicy: Always') === 0) {
    throw new ClusterError(`core-install.yaml no longer names ${UPSTREAM_IMAGE}, Redis from Alpine and imagePullPolicy Always: look at it again`);
  }
  return text
    .replaceAll(UPSTREAM_IMAGE, ref('argocd'))
    .replace(UPSTREAM_REDIS, ref('redis'))
    .replaceAll('imagePullPolicy: Always', 'imagePullPolicy: IfNotPresent');
}

/** What argocd-server's initializeDefaultProject creates. */
const DEFAULT_PROJECT = {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'AppProject',
  metadata: { name: 'default', namespace: ARGOCD_NAMESPACE },
  spec: {
    sourceRepos: ['*'],
    destinations: [{ server: '*', namespace: '*' }],
    clusterResourceWhitelist: [{ group: '*', kind: '*' }],
  },
};

/**
 * Installs Argo CD and gracegate's plugin, and waits until every component runs. Returns the
 * commands, as a user would type them (for the test's diagnostics).
 */
export async function installArgoCd(built: ArgoCdBuilt): Promise<string[]> {
  const ns = ARGOCD_NAMESPACE;
  kubectl(['create', 'namespace', ns]);
  // Server-side, as Argo CD's docs say: the ApplicationSet CRD is too large for the client-side
  // apply's last-applied annotation.
  kubectl(['apply', '-n', ns, '--server-side', '--force-conflicts', '-f', '-'], { input: coreInstall(built), timeoutMs: 120_000 });
  // Polled, not `kubectl wait --for=condition=Established`: kubectl 1.34 gives up at once with
  // ".status.conditions accessor error" when it reads a CRD before the API server wrote its status.
  for (const crd of ['applications.argoproj.io', 'appprojects.argoproj.io']) {
    await waitUntil(`CRD ${crd} Established`, 60_000, () =>
      kubectl(['get', 'crd', crd, '-o', 'jsonpath={.status.conditions[?(@.type=="Established")].status}']).trim() === 'True' ? true : undefined,
    );
  }
  kubectl(['apply', '-f', '-'], { input: JSON.stringify(DEFAULT_PROJECT) });
  // gracegate's README, "Argo CD, config management plugin":
  kubectl(['-n', ns, 'create', 'configmap', 'gracegate-cmp-plugin', `--from-file=plugin.yaml=${join(REPO_ROOT, 'plugins/argocd/plugin.yaml')}`]);
  kubectl(['-n', ns, 'patch', 'deployment', 'argocd-repo-server', '--patch-file', join(REPO_ROOT, 'plugins/argocd/repo-server-patch.yaml')]);
  for (const w of [
    'deployment/argocd-redis',
    'deployment/argocd-repo-server',
    'statefulset/argocd-application-controller',
    'deployment/argocd-applicationset-controller',
  ]) {
    try {
      kubectl(['-n', ns, 'rollout', 'status', w, '--timeout=240s'], { timeoutMs: 250_000 });
    } catch (err) {
      throw new ClusterError(`${(err as Error).message}\n${argoCdPods()}`);
    }
  }
  return [
    `kubectl apply -n argocd --server-side --force-conflicts -f manifests/core-install.yaml (Argo CD ${ARGOCD_VERSION}; images built here)`,
    'kubectl apply (AppProject default, as argocd-server would create it)',
    'kubectl -n argocd create configmap gracegate-cmp-plugin --from-file=plugin.yaml=plugins/argocd/plugin.yaml',
    'kubectl -n argocd patch deployment argocd-repo-server --patch-file plugins/argocd/repo-server-patch.yaml',
  ];
}

/**
 * Removes Argo CD's namespace, and its Applications with it: none carries the resources finalizer,
 * so nothing cascades into the gateways (each test removes its own). Argo CD's CRDs stay; the
 * cluster's teardown takes them.
 */
export function uninstallArgoCd(): void {
  // Argo CD's own shutdown is not under test: its pods go without their grace periods.
  deleteNamespacesNow([ARGOCD_NAMESPACE]);
}

/** Argo CD's pods, their containers' states and the last lines of their logs (for a failed install). */
export function argoCdPods(): string {
  const pods = kubectl(['-n', ARGOCD_NAMESPACE, 'get', 'pods', '-o', 'wide'], { allowFailure: true });
  const logs = kubectl(['-n', ARGOCD_NAMESPACE, 'logs', '--all-containers', '--prefix', '--tail=15', '-l', 'app.kubernetes.io/name'], {
    allowFailure: true,
  });
  const previous = kubectl(['-n', ARGOCD_NAMESPACE, 'logs', '--all-containers', '--prefix', '--previous', '--tail=15', '-l', 'app.kubernetes.io/name'], {
    allowFailure: true,
  });
  return `${pods}\n${logs}\nprevious:\n${previous}`;
}

/**
 * `gracegate lint --cluster` against the test cluster: run in the outside namespace (where the API
 * server's address is reachable) with the cluster's kubeconfig, or with a kubeconfig of a
 * ServiceAccount allowed only get/list on the kinds lint reads; and the three drifts the issue
 * names (a hand edit, a chart upgrade that drops a field, an injector setting that rewrites the
 * sidecar's probes) made on live delivery paths.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify as yamlStringify } from 'yaml';
import { REPO_ROOT } from '../../../support/repo';
import { chartDir } from '../charts';
import { clusterEnv, helm, kubectl, kubectlApply, kubectlJson } from '../kubectl';
import { OUTSIDE } from '../layout';
import { inNetns, waitUntil } from '../sh';
import type { Delivered } from './paths';
import type { LintFinding } from './live-lint';
import { testDir } from '../../../support/tmp';

const GRACEGATE = join(REPO_ROOT, 'bin/gracegate.js');

export type ClusterLint = { status: number | null; findings: LintFinding[]; unread: string[]; objects: number; stderr: string };

/** `gracegate lint --cluster … --format json` with the cluster's kubeconfig (or the one given with --kubeconfig in `args`). */
export function lintCluster(args: readonly string[]): ClusterLint {
  const [cmd, ...rest] = inNetns(OUTSIDE.netns, process.execPath, [GRACEGATE, 'lint', '--cluster', '--format', 'json', ...args]);
  const r = spawnSync(cmd!, rest, { encoding: 'utf8', timeout: 180_000, env: clusterEnv(), maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  if (r.status !== 0 && r.status !== 1) throw new Error(`gracegate lint --cluster ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const out = JSON.parse(r.stdout) as { findings: LintFinding[]; unread?: string[]; objects: number };
  return { status: r.status, findings: out.findings, unread: out.unread ?? [], objects: out.objects, stderr: r.stderr };
}

/** A directory with each delivered path's spec, one file each: `--spec DIR`. */
export function specDirectory(delivered: readonly Delivered[]): string {
  const dir = testDir('gracegate-lint-specs-');
  for (const d of delivered) copyFileSync(d.specFile, join(dir, `${d.path.key}.yaml`));
  return dir;
}

/** What lint reads, as RBAC rules: get and list, nothing else. */
export const READ_RULES: ReadonlyArray<{ apiGroups: string[]; resources: string[] }> = [
  { apiGroups: ['apps'], resources: ['deployments', 'statefulsets', 'daemonsets'] },
  { apiGroups: [''], resources: ['pods', 'services', 'namespaces', 'configmaps'] },
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets'] },
  { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'] },
  { apiGroups: ['networking.istio.io'], resources: ['envoyfilters'] },
  { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'] },
];

export const RBAC_NAMESPACE = 'dp-lint-rbac';

/**
 * A ServiceAccount bound to a ClusterRole of `rules` (each get and list), and a kubeconfig that
 * authenticates as it with a short-lived token; waits until the authorizer answers for it.
 */
export async function serviceAccountKubeconfig(name: string, rules: ReadonlyArray<{ apiGroups: string[]; resources: string[] }>): Promise<string> {
  kubectl(['create', 'namespace', RBAC_NAMESPACE], { allowFailure: true });
  kubectlApply(
    [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: RBAC_NAMESPACE } },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name },
        rules: rules.map((r) => ({ ...r, verbs: ['get', 'list'] })),
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ kind: 'ServiceAccount', name, namespace: RBAC_NAMESPACE }],
      },
    ]
      .map((o) => JSON.stringify(o))
      .join('\n---\n'),
  );
  const who = `system:serviceaccount:${RBAC_NAMESPACE}:${name}`;
  await waitUntil(`RBAC for ${who}`, 30_000, () =>
    kubectl(['auth', 'can-i', 'list', 'pods', '--all-namespaces', '--as', who], { allowFailure: true }).trim() === 'yes' ? true : undefined,
  );
  const token = kubectl(['create', 'token', name, '-n', RBAC_NAMESPACE, '--duration=15m']).trim();
  const view = kubectlJson<{ clusters: Array<{ name: string; cluster: Record<string, unknown> }> }>(['config', 'view', '--raw', '--minify']);
  const cluster = view.clusters[0]!;
  const file = join(testDir(`gracegate-${name}-`), 'kubeconfig');
  writeFileSync(
    file,
    yamlStringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [cluster],
      users: [{ name, user: { token } }],
      contexts: [{ name, context: { cluster: cluster.name, user: name } }],
      'current-context': name,
    }),
    { mode: 0o600 },
  );
  return file;
}

export function removeServiceAccounts(names: readonly string[]): void {
  for (const n of names) {
    kubectl(['delete', 'clusterrolebinding', n, '--ignore-not-found'], { allowFailure: true });
    kubectl(['delete', 'clusterrole', n, '--ignore-not-found'], { allowFailure: true });
  }
  kubectl(['delete', 'namespace', RBAC_NAMESPACE, '--wait=false', '--ignore-not-found'], { allowFailure: true });
}

/** A hand edit: `kubectl edit` of the Deployment's grace period, the editor a sed that writes `seconds`. */
export function editGracePeriod(d: Delivered, seconds: number): void {
  const was = d.changes.terminationGracePeriodSeconds;
  kubectl(['-n', d.options.namespace, 'edit', `deployment/${d.options.name}`], {
    // kubectl runs an editor with quotes in it through a shell, the file to edit appended.
    env: { KUBE_EDITOR: `sed -i 's/terminationGracePeriodSeconds: ${was}$/terminationGracePeriodSeconds: ${seconds}/'` },
  });
}

/** A chart upgrade that drops a field: `helm upgrade` of an overlay path with the values overlay less its minReadySeconds line. */
export function upgradeWithoutMinReady(d: Delivered): void {
  const overlay = readFileSync(join(d.dir, 'synth', 'values-overlay.yaml'), 'utf8');
  const dropped = overlay
    .split('\n')
    .filter((l) => !/^minReadySeconds:/.test(l))
    .join('\n');
  if (dropped === overlay) throw new Error('the values overlay has no minReadySeconds line to drop');
  const file = join(d.dir, 'values-overlay-upgrade.yaml');
  writeFileSync(file, dropped);
  helm(['upgrade', d.changes.gateway.name, chartDir(d.path.chart), '-n', d.options.namespace, '-f', file, '-f', join(d.dir, 'lab.yaml')], {
    helm: d.path.key === 'overlay-1.27.9' ? 'v31' : 'v33',
  });
}

/**
 * An injector setting that rewrites the sidecar's probes: the pod template's
 * sidecar.istio.io/rewriteAppHTTPProbers turned to "true"; waits until a Pod the injector admitted
 * with it exists (its probes are then pilot-agent's).
 */
export async function rewriteProbes(d: Delivered): Promise<string> {
  const ns = d.options.namespace;
  kubectl([
    '-n',
    ns,
    'patch',
    `deployment/${d.options.name}`,
    '--type',
    'merge',
    '-p',
    JSON.stringify({ spec: { template: { metadata: { annotations: { 'sidecar.istio.io/rewriteAppHTTPProbers': 'true' } } } } }),
  ]);
  return waitUntil(
    `a Pod of ${ns}/${d.options.name} admitted with its probes rewritten`,
    120_000,
    () => {
      const pods = kubectlJson<{ items: Array<{ metadata: { name: string; annotations?: Record<string, string> } }> }>([
        '-n',
        ns,
        'get',
        'pods',
        '-l',
        d.selector,
      ]);
      return pods.items.find((p) => p.metadata.annotations?.['sidecar.istio.io/rewriteAppHTTPProbers'] === 'true')?.metadata.name;
    },
    1000,
  );
}

/**
 * The live objects of one delivered path as the API server returns them (less managedFields and
 * status, which lint does not read), with its spec: DIR/<key>.yaml and DIR/<key>.spec.yaml.
 */
export function captureLive(d: Delivered, dir: string): void {
  const ns = d.options.namespace;
  const list = kubectlJson<{ items: Array<Record<string, any>> }>(['-n', ns, 'get', 'deploy,svc,pdb,hpa,pods,networkpolicies']);
  const cm = kubectlJson<Record<string, any>>(['-n', ns, 'get', 'configmap', d.changes.hcConfigMapName]);
  const items = [...list.items, cm].map((o) => {
    const { status: _status, ...rest } = o;
    const { managedFields: _managed, ...metadata } = rest.metadata;
    return { ...rest, metadata };
  });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${d.path.key}.yaml`), yamlStringify({ apiVersion: 'v1', kind: 'List', items }));
  copyFileSync(d.specFile, join(dir, `${d.path.key}.spec.yaml`));
}

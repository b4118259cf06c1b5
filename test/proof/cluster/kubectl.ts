/**
 * kubectl and helm against the test cluster. The API server's address exists only inside the
 * cluster's namespaces, so every call runs in the outside namespace (where the LB and the clients
 * are), with the cluster's kubeconfig and the test preparation's tools first on PATH.
 */
import { KUBECONFIG, OUTSIDE, TOOLS_PATH } from './layout';
import { runIn, waitUntil, type RunOptions } from './sh';

export function clusterEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, KUBECONFIG, PATH: [...TOOLS_PATH, process.env.PATH ?? '/usr/bin:/bin'].join(':'), ...extra };
}

export function kubectl(args: readonly string[], opts: RunOptions = {}): string {
  return runIn(OUTSIDE.netns, 'kubectl', args, { timeoutMs: 60_000, ...opts, env: clusterEnv(opts.env) });
}

export function kubectlJson<T>(args: readonly string[], opts: RunOptions = {}): T {
  return JSON.parse(kubectl([...args, '-o', 'json'], opts)) as T;
}

/** `kubectl apply -f -` of the given documents (JSON or YAML text). */
export function kubectlApply(manifests: string, extraArgs: readonly string[] = []): string {
  return kubectl(['apply', '-f', '-', ...extraArgs], { input: manifests });
}

export function helm(args: readonly string[], opts: RunOptions & { helm?: 'v31' | 'v33' } = {}): string {
  const env =
    opts.helm === 'v31'
      ? clusterEnv({ PATH: [TOOLS_PATH[0]!.replace('/v33/', '/v31/'), ...TOOLS_PATH.slice(1), process.env.PATH ?? ''].join(':') })
      : clusterEnv();
  return runIn(OUTSIDE.netns, 'helm', args, { timeoutMs: 180_000, ...opts, env: { ...env, ...opts.env } });
}

/**
 * Deletes namespaces whose pods' sequences are not under test, without waiting for their grace
 * periods (a gateway plan holds a pod for minutes): the workload controllers first, leaving their
 * pods (so that none makes a new pod the namespace's removal would then delete gracefully), then
 * the pods at once, then the namespaces. Returns without waiting for the namespaces to go.
 */
export function deleteNamespacesNow(namespaces: readonly string[]): void {
  for (const ns of namespaces) {
    kubectl(['-n', ns, 'delete', 'deployments,replicasets,statefulsets,daemonsets', '--all', '--cascade=orphan', '--wait=false'], { allowFailure: true });
    kubectl(['-n', ns, 'delete', 'pods', '--all', '--grace-period=0', '--force', '--wait=false'], { allowFailure: true });
    kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found'], { allowFailure: true });
  }
}

/** Waits until none of `namespaces` exists any more (bounded by `timeoutMs`); `what` names them in a timeout. */
export async function waitNamespacesGone(what: string, namespaces: readonly string[], timeoutMs: number): Promise<void> {
  await waitUntil(
    `${what} gone`,
    timeoutMs,
    () => {
      const left = kubectl(['get', 'namespaces', '-o', 'name']).split('\n');
      return namespaces.some((ns) => left.includes(`namespace/${ns}`)) ? undefined : true;
    },
    500,
  );
}

/**
 * Pod Security admission on the real API server (on by default in Kubernetes 1.34): which
 * containers of the pods in a namespace the `restricted` level would refuse, asked of the API server
 * itself (a server-side dry run of the namespace's `enforce` label, which evaluates the pods already
 * there and warns for each), and whether a pod is admitted in a `restricted` namespace (a
 * server-side dry run of its creation).
 */
import { spawnSync } from 'node:child_process';
import { clusterEnv, kubectl } from './kubectl';
import { OUTSIDE } from './layout';
import { netnsPrefix } from './sh';

export const PSA_ENFORCE = 'pod-security.kubernetes.io/enforce';
export const RESTRICTED_LABELS = { [PSA_ENFORCE]: 'restricted' } as const;

/** The container names a Pod Security message names (`container "a"`, `containers "a", "b"`). */
export function containersNamed(message: string): string[] {
  const names = new Set<string>();
  for (const m of message.matchAll(/containers? ((?:"[^"]+"(?:, | and )?)+)/g)) {
    for (const q of m[1]!.matchAll(/"([^"]+)"/g)) names.add(q[1]!);
  }
  return [...names].sort();
}

export type RestrictedCheck = { warnings: string; containers: string[] };

/**
 * What `restricted` would say of the pods now in `namespace`: the API server's warnings for a
 * server-side dry run of `enforce=restricted` on it (nothing is changed), and the containers they name.
 */
export function restrictedWarnings(namespace: string): RestrictedCheck {
  // The warnings come on stderr, which kubectl() does not keep.
  const [cmd, ...prefix] = netnsPrefix(OUTSIDE.netns);
  const res = spawnSync(cmd!, [...prefix, 'kubectl', 'label', 'namespace', namespace, `${PSA_ENFORCE}=restricted`, '--overwrite', '--dry-run=server'], {
    encoding: 'utf8',
    env: clusterEnv(),
    timeout: 30_000,
  });
  if (res.status !== 0) throw new Error(`kubectl label --dry-run=server namespace ${namespace}: ${res.stderr}`);
  const warnings = res.stderr
    .split('\n')
    .filter((l) => l.startsWith('Warning:'))
    .join('\n');
  return { warnings, containers: containersNamed(warnings) };
}

/**
 * Pod Security admission on the gateway namespaces the cluster tests create: `baseline`, because
 * the istio/gateway chart's and istiod's istio-proxy container sets no seccompProfile, which
 * `restricted` requires (the gracegate-hc container passes `restricted`: netpol.test.ts and
 * delivery-paths.test.ts ask the API server). `warn` and `audit` at `restricted` keep what
 * restricted would refuse visible.
 */
export const GATEWAY_NAMESPACE_PSA = {
  [PSA_ENFORCE]: 'baseline',
  'pod-security.kubernetes.io/warn': 'restricted',
  'pod-security.kubernetes.io/audit': 'restricted',
} as const;

/** Creates a gateway namespace with its Pod Security labels (GATEWAY_NAMESPACE_PSA); labels it if it exists. */
export function createGatewayNamespace(namespace: string): void {
  kubectl(['apply', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: GATEWAY_NAMESPACE_PSA } }),
  });
}

/** Creates (or labels) a namespace whose pods must pass `restricted`. */
export function restrictedNamespace(namespace: string): void {
  kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: RESTRICTED_LABELS } }) });
}

/** A server-side dry run of creating `pod` in `namespace`: '' when admitted, else the API server's refusal. */
export function dryRunCreate(pod: Record<string, unknown>): string {
  try {
    kubectl(['create', '--dry-run=server', '-o', 'name', '-f', '-'], { input: JSON.stringify(pod) });
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

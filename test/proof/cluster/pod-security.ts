/**
 * Pod Security admission on the real API server (on by default in Kubernetes 1.34): whether a pod
 * is admitted in a `restricted` namespace, and which of its containers the refusal names, asked of
 * the API server itself (a server-side dry run of its creation: nothing is created).
 */
import { kubectl } from './kubectl';
import { waitUntil } from './sh';

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

export type RestrictedCheck = { refusal: string; containers: string[] };

type LivePod = { metadata: { name: string }; spec: Record<string, unknown> & { volumes?: Array<{ name: string }>; containers: unknown[] } };

/**
 * What `restricted` says of a live pod's spec (or whatever level `namespace` enforces: the fleet's
 * test asks baseline): a server-side dry run of creating a copy of it in `namespace` (its containers, init containers, pod security context and
 * volumes as the API server holds them, after istiod's injection), and the containers its refusal
 * names; '' and none when it is admitted. The copy runs as the namespace's default service account,
 * without the API token volume, and is not injected again: only Pod Security decides.
 */
export function restrictedCheck(pod: LivePod, namespace: string): RestrictedCheck {
  const isToken = (name: string) => name.startsWith('kube-api-access-');
  const strip = (c: unknown) => {
    const container = { ...(c as Record<string, unknown>) };
    const mounts = container.volumeMounts as Array<{ name: string }> | undefined;
    if (mounts) container.volumeMounts = mounts.filter((m) => !isToken(m.name));
    return container;
  };
  // The priority the API server filled in must not be given again (the Priority admission plugin computes it).
  const { nodeName: _node, serviceAccount: _sa, serviceAccountName: _san, priority: _priority, ...spec } = pod.spec;
  const copy = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `psa-${pod.metadata.name}`.slice(0, 63), namespace, labels: { 'sidecar.istio.io/inject': 'false' } },
    spec: {
      ...spec,
      automountServiceAccountToken: false,
      containers: pod.spec.containers.map(strip),
      ...(Array.isArray(pod.spec.initContainers) ? { initContainers: (pod.spec.initContainers as unknown[]).map(strip) } : {}),
      volumes: (pod.spec.volumes ?? []).filter((v) => !isToken(v.name)),
    },
  };
  const refusal = dryRunCreate(copy);
  return { refusal, containers: containersNamed(refusal) };
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

/**
 * Creates (or labels) a namespace whose pods must pass `restricted`; resolves once its default
 * service account exists (the API server refuses a pod in a namespace without it, even in a dry run).
 */
export async function restrictedNamespace(namespace: string): Promise<void> {
  kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: RESTRICTED_LABELS } }) });
  await waitUntil(
    `the default service account of ${namespace}`,
    30_000,
    () => (kubectl(['-n', namespace, 'get', 'serviceaccount', 'default', '-o', 'name'], { allowFailure: true }).trim() !== '' ? true : undefined),
    250,
  );
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

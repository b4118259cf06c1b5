import type { GatewaySpec } from '../schema/gateway-spec';

/**
 * How the hc sidecar runs in the gateway pod (docs/native-sidecar.md):
 * - `container`: an ordinary container next to istio-proxy. Works on every Kubernetes.
 * - `native`: an init container with `restartPolicy: Always` (KEP-753). The kubelet starts it
 *   before the proxy, runs its preStop at the pod's deletion like every other preStop, but sends it
 *   SIGTERM only after every main container (istio-proxy) has exited, and restarts it if it dies
 *   while the pod terminates (kubernetes pkg/kubelet/kuberuntime/kuberuntime_termination_order.go,
 *   and the `restartPolicy` field's API documentation).
 */
export type HcSidecarKind = 'native' | 'container';

export type HcSidecarPlan = {
  kind: HcSidecarKind;
  /** Why this kind: the spec field that decided, with its value. */
  reason: string;
  /** spec.kubernetesVersion as major.minor, when given. */
  kubernetesVersion?: string;
};

/** Native sidecars are on by default from 1.29 (beta) and GA in 1.33 (KEP-753; docs/facts.md §11). */
export const NATIVE_SIDECAR_ON_BY_DEFAULT: readonly [number, number] = [1, 29];
export const NATIVE_SIDECAR_GA: readonly [number, number] = [1, 33];

export type K8sVersion = { major: number; minor: number };

/** `1.33`, `v1.33.2` → {1, 33}; undefined when the spec does not say. */
export function kubernetesVersionOf(spec: GatewaySpec): K8sVersion | undefined {
  const m = /^v?(\d+)\.(\d+)/.exec(spec.spec.kubernetesVersion ?? '');
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
}

export function versionAtLeast(v: K8sVersion, [major, minor]: readonly [number, number]): boolean {
  return v.major > major || (v.major === major && v.minor >= minor);
}

const text = ([major, minor]: readonly [number, number]) => `${major}.${minor}`;

/**
 * The kind: `spec.health.sidecar` when given; else native from Kubernetes 1.33, where native
 * sidecars are GA (the same line Istio's injector draws for its own: native only when every kubelet
 * is 1.33 or later, istio/istio pkg/kube/inject/webhook.go `detectNativeSidecar`); else container.
 * Combinations that cannot work are findings (plan/findings.ts), not refusals: the spec is valid.
 */
export function planHcSidecar(spec: GatewaySpec): HcSidecarPlan {
  const v = kubernetesVersionOf(spec);
  const version = v ? { kubernetesVersion: `${v.major}.${v.minor}` } : {};
  const chosen = spec.spec.health.sidecar;
  if (chosen !== undefined) return { kind: chosen, reason: `spec.health.sidecar: ${chosen}`, ...version };
  if (!v) {
    return { kind: 'container', reason: 'spec.kubernetesVersion not given: the ordinary container, which every Kubernetes runs' };
  }
  if (versionAtLeast(v, NATIVE_SIDECAR_GA)) {
    return { kind: 'native', reason: `spec.kubernetesVersion ${v.major}.${v.minor}: native sidecars are GA from ${text(NATIVE_SIDECAR_GA)}`, ...version };
  }
  return {
    kind: 'container',
    reason: `spec.kubernetesVersion ${v.major}.${v.minor}: native sidecars are GA only from ${text(NATIVE_SIDECAR_GA)}${versionAtLeast(v, NATIVE_SIDECAR_ON_BY_DEFAULT) ? ` (on by default from ${text(NATIVE_SIDECAR_ON_BY_DEFAULT)}: choose them with spec.health.sidecar: native)` : ''}`,
    ...version,
  };
}

export { text as versionText };

import { kubernetesMinor, type WorkloadSpec } from '../../schema/workload-spec';

/** KEP-3960's `lifecycle.preStop.sleep`: alpha 1.29, beta and on by default 1.30, GA 1.34 (docs/facts.md §9). */
export const NATIVE_SLEEP_ON_BY_DEFAULT_MINOR = 30;
export const NATIVE_SLEEP_GA_MINOR = 34;

/**
 * How the preStop waits: `sleep` is the kubelet's own wait (nothing runs in the container), `exec`
 * runs `sleep N` in the container (needs the binary), `none` when the plan has no wait.
 */
export type PreStopAction = 'sleep' | 'exec' | 'none';

export type PreStopChoice = { action: PreStopAction; reason: string };

/** The preStop's form, from the cluster's version and what the image holds. */
export function choosePreStopAction(spec: WorkloadSpec['spec'], seconds: number): PreStopChoice {
  if (seconds === 0) return { action: 'none', reason: 'the plan waits 0 s before SIGTERM: no preStop' };
  const minor = kubernetesMinor(spec.kubernetesVersion);
  if (minor >= NATIVE_SLEEP_ON_BY_DEFAULT_MINOR) {
    const stage = minor >= NATIVE_SLEEP_GA_MINOR ? 'GA since 1.34' : 'beta, on by default since 1.30';
    return {
      action: 'sleep',
      reason: `Kubernetes ${spec.kubernetesVersion}: the native sleep action (${stage}) is the kubelet's own wait, so no shell or sleep binary is needed in the image`,
    };
  }
  const image =
    spec.image === undefined
      ? 'the image is not described (spec.image)'
      : spec.image.distroless
        ? 'the image has no sleep binary (spec.image.distroless)'
        : 'the image has a sleep binary';
  return {
    action: 'exec',
    reason: `Kubernetes ${spec.kubernetesVersion} has no native sleep action on by default (from 1.30): exec sleep in the container; ${image}`,
  };
}

import type { SharedRule } from './finding';

/**
 * The longest grace period Kubernetes runs: 9223372036 s (about 292 years). The API takes any
 * non-negative int64 of seconds (kubernetes pkg/apis/core/validation/validation.go sets no upper
 * bound), and the kubelet waits for it as a Go time.Duration, int64 nanoseconds
 * (pkg/kubelet/kuberuntime/kuberuntime_container.go, `time.Duration(gracePeriod) * time.Second`),
 * so a longer one overflows. No request a drain could wait for lasts longer (docs/facts.md §6).
 */
export const LONGEST_GRACE_PERIOD_SECONDS = Math.floor((2 ** 63 - 1) / 1e9);

/** A grace period above this is a sign the p99 is not something a pod termination should wait for. */
export const SANE_GRACE_PERIOD_SECONDS = 600;

/** A planned grace period, and what drove it for the product's words. */
export type GracePeriodFacts = { terminationGracePeriodSeconds: number } & ({ product: 'gateway'; longRequestP99Seconds: number } | { product: 'workload' });

export const GRACE_PERIOD_TOO_LONG: SharedRule<GracePeriodFacts, 'gateway' | 'workload'> = {
  id: 'grace-period-too-long',
  severity: 'warning',
  field: { gateway: 'spec.traffic.longRequestP99Seconds', workload: 'spec.traffic.maxRequestSeconds' },
  check: (f) => {
    if (f.terminationGracePeriodSeconds <= SANE_GRACE_PERIOD_SECONDS) return undefined;
    return f.product === 'gateway'
      ? {
          message: `terminationGracePeriodSeconds ${f.terminationGracePeriodSeconds}s exceeds ${SANE_GRACE_PERIOD_SECONDS}s: every rollout step and node drain waits that long, and a p99 of ${f.longRequestP99Seconds}s is closer to a stream than a request`,
          remediation:
            'move long streams to their own gateway, or let clients reconnect (cap the drain timeout with spec.drain.timeout and accept that longer requests are cut)',
        }
      : {
          message: `terminationGracePeriodSeconds ${f.terminationGracePeriodSeconds}s exceeds ${SANE_GRACE_PERIOD_SECONDS}s: a pod with such a request in flight holds its node drain and its rollout step that long`,
          remediation: 'let clients resume long work (jobs, streams with reconnects) instead of holding the pod, and lower spec.traffic.maxRequestSeconds',
        };
  },
};

import { kubernetesMinor, type WorkloadSpec } from '../../schema/workload-spec';
import { applyRules, forProduct, type Finding, type RuleOf } from '../../model/finding';
import { GRACE_PERIOD_TOO_LONG } from '../../model/grace-period';
import { ANTI_AFFINITY_UNSCHEDULABLE, ROLLOUT_SURGE_DEADLOCK, ROLLOUT_TAKES_ALL_PODS, SINGLE_REPLICA, type RolloutCheck } from '../../model/rollout';
import { NATIVE_SLEEP_GA_MINOR, type PreStopChoice } from './prestop-action';
import type { WorkloadTimings } from './timings';
import type { Propagation } from './traffic-path';

/** What a workload rule reads: the spec as planned, the timings, the preStop's form, the network path and the rollout. */
export type WorkloadPlanContext = { spec: WorkloadSpec; timings: WorkloadTimings; preStop: PreStopChoice; propagation: Propagation; rollout: RolloutCheck };

export type WorkloadRule = RuleOf<WorkloadPlanContext>;

/** The preStop the plan would choose for a graceful app: the network path plus the margin. */
function gracefulPreStop({ spec, timings }: WorkloadPlanContext): number {
  return Math.ceil(timings.propagationDelaySeconds + spec.spec.termination.preStopMargin);
}

/**
 * Each rule's fix moves one number in one direction (a longer grace period, a longer timeout, a
 * graceful app, a newer cluster), so no fix can bring back a finding another fix removed.
 */
export const WORKLOAD_RULES: readonly WorkloadRule[] = [
  {
    id: 'prestop-exec-distroless',
    severity: 'error',
    field: 'spec.kubernetesVersion',
    check: ({ spec: { spec: s }, preStop }) =>
      preStop.action === 'exec' && s.image?.distroless === true
        ? {
            message: `Kubernetes ${s.kubernetesVersion} has no native sleep action on by default, and a distroless image has no sleep to exec: the hook fails, and the kubelet sends SIGTERM at once, as if there were no preStop`,
            remediation:
              'run on Kubernetes 1.30+ (the sleep action needs nothing in the image), or ship a sleep binary in the image and set spec.image.distroless: false',
            expectedLoss: 'refused-connections',
          }
        : undefined,
  },
  {
    id: 'prestop-exec-needs-sleep',
    severity: 'warning',
    field: 'spec.image',
    check: ({ spec: { spec: s }, preStop }) =>
      preStop.action === 'exec' && s.image === undefined
        ? {
            message: `on Kubernetes ${s.kubernetesVersion} the preStop runs 'sleep' inside the container: an image without it (distroless, scratch) fails the hook, and the pod gets SIGTERM at once`,
            remediation: 'say what the image holds: spec.image.distroless (false when it has a sleep binary), or run on Kubernetes 1.30+',
          }
        : undefined,
  },
  {
    id: 'native-sleep-beta',
    severity: 'info',
    field: 'spec.kubernetesVersion',
    check: ({ spec: { spec: s }, preStop }) =>
      preStop.action === 'sleep' && kubernetesMinor(s.kubernetesVersion) < NATIVE_SLEEP_GA_MINOR
        ? {
            message: `the sleep action is beta on ${s.kubernetesVersion} (on by default from 1.30, GA in 1.34): an API server with the PodLifecycleSleepAction gate off refuses the pod ("must specify a handler type", Azure/AKS#4657)`,
            remediation:
              'nothing where the API server accepts a pod with a preStop sleep (try one); otherwise turn the PodLifecycleSleepAction gate on, or have the provider do it',
          }
        : undefined,
  },
  {
    id: 'graceful-shutdown-absent',
    severity: 'warning',
    field: 'spec.app.gracefulShutdown',
    check: (ctx) => {
      const {
        spec: { spec: s },
        timings: t,
      } = ctx;
      if (s.app.gracefulShutdown) return undefined;
      const short = gracefulPreStop(ctx);
      // Long requests in the sense that matters here: longer than the wait a graceful app would need.
      if (t.longestRequestSeconds < short) return undefined;
      return {
        message: `the app exits at SIGTERM, so the requests in flight would be cut: the preStop waits out the longest request too (${t.preStopSeconds}s instead of ${short}s), on every pod of every rollout, however short the requests really in flight are`,
        remediation: `make the app shut down gracefully on SIGTERM (stop accepting, finish in-flight requests, exit: Go http.Server.Shutdown, Node server.close) and set spec.app.gracefulShutdown: true: the preStop drops to ${short}s and the drain waits only as long as requests really run`,
      };
    },
  },
  {
    id: 'prestop-not-below-grace',
    severity: 'error',
    field: 'spec.termination.terminationGracePeriodSeconds',
    check: ({ spec: { spec: s }, timings: t }) =>
      t.preStopSeconds > 0 && t.preStopSeconds >= t.terminationGracePeriodSeconds
        ? {
            message: `the preStop (${t.preStopSeconds}s) is not shorter than the grace period (${t.terminationGracePeriodSeconds}s): the kubelet cuts the hook at the grace period and leaves 2 s before SIGKILL, so requests in flight get 2 s`,
            remediation: `raise spec.termination.terminationGracePeriodSeconds to ${Math.ceil(t.preStopSeconds + t.shutdownTimeoutSeconds + s.termination.exitMargin)} (preStop + shutdown timeout + exitMargin), or remove the override`,
            expectedLoss: 'reset-sessions',
          }
        : undefined,
  },
  {
    id: 'shutdown-timeout-exceeds-grace',
    severity: 'warning',
    field: 'spec.termination.terminationGracePeriodSeconds',
    check: ({ spec: { spec: s }, timings: t }) =>
      s.app.gracefulShutdown &&
      t.preStopSeconds < t.terminationGracePeriodSeconds &&
      t.shutdownTimeoutSeconds > t.terminationGracePeriodSeconds - t.preStopSeconds
        ? {
            message: `the app's shutdown timeout (${t.shutdownTimeoutSeconds}s) is longer than grace period - preStop (${t.terminationGracePeriodSeconds}s - ${t.preStopSeconds}s): SIGKILL ends the drain first, cutting requests longer than ${t.terminationGracePeriodSeconds - t.preStopSeconds}s`,
            remediation: `raise spec.termination.terminationGracePeriodSeconds to ${Math.ceil(t.preStopSeconds + t.shutdownTimeoutSeconds + s.termination.exitMargin)} (preStop + shutdown timeout + exitMargin), or remove the override`,
            expectedLoss: 'reset-sessions',
          }
        : undefined,
  },
  {
    id: 'shutdown-timeout-below-longest-request',
    severity: 'warning',
    field: 'spec.app.shutdownTimeout',
    check: ({ spec: { spec: s }, timings: t }) =>
      s.app.gracefulShutdown && t.shutdownTimeoutSeconds < t.longestRequestSeconds
        ? {
            message: `the app gives up on in-flight requests after ${t.shutdownTimeoutSeconds}s, but requests run up to ${t.longestRequestSeconds}s: longer ones are cut`,
            remediation:
              s.app.shutdownTimeout?.via === 'fixed'
                ? `configure the app's timeout to at least ${Math.ceil(t.longestRequestSeconds)}s and set spec.app.shutdownTimeout.seconds`
                : `raise spec.termination.shutdownTimeoutSeconds to at least ${Math.ceil(t.longestRequestSeconds)}, or remove the override (the plan computes it)`,
            expectedLoss: 'reset-sessions',
          }
        : undefined,
  },
  {
    id: 'shutdown-timeout-unknown',
    severity: 'warning',
    field: 'spec.app.shutdownTimeout',
    check: ({ spec: { spec: s }, timings: t }) =>
      s.app.gracefulShutdown && s.app.shutdownTimeout === undefined
        ? {
            message: `gracegate can neither set nor read the app's shutdown timeout: the grace period assumes the app waits up to ${t.shutdownTimeoutSeconds}s for in-flight requests; a shorter timeout cuts longer requests, a longer one is cut by SIGKILL`,
            remediation: "say how it is set: spec.app.shutdownTimeout via env or flag (gracegate then sets it), or via fixed with the app's own value",
          }
        : undefined,
  },
  {
    id: 'propagation-delay-assumed',
    severity: 'info',
    field: 'spec.trafficPath.propagationDelay',
    check: ({ propagation, timings: t }) =>
      propagation.assumed
        ? {
            message: `no measured delay for this traffic path: the preStop assumes it drops the pod as fast as kube-proxy (${t.propagationDelaySeconds}s); if it is slower, new requests reach the pod after it stopped accepting`,
            remediation: 'measure the time from a pod deletion until the path stops sending to it, and set spec.trafficPath.propagationDelay',
          }
        : undefined,
  },
  forProduct(GRACE_PERIOD_TOO_LONG, 'workload', ({ timings }: WorkloadPlanContext) => ({
    product: 'workload',
    terminationGracePeriodSeconds: timings.terminationGracePeriodSeconds,
  })),
  {
    id: 'statefulset-no-surge',
    severity: 'info',
    field: 'spec.workload.kind',
    check: ({ spec: { spec: s }, timings: t }) =>
      s.workload.kind === 'StatefulSet'
        ? {
            message: `a StatefulSet replaces each pod in place (no surge): one replica fewer serves for each step, which lasts the pod's termination (up to ${t.podTerminationSeconds}s) plus its successor's start`,
            remediation: 'size replicas so that n-1 carry the load; nothing to change in the termination',
          }
        : undefined,
  },
  // The rollout against the nodes, with the gateway's rules (src/model/rollout.ts).
  ...[ROLLOUT_SURGE_DEADLOCK, ROLLOUT_TAKES_ALL_PODS, ANTI_AFFINITY_UNSCHEDULABLE, SINGLE_REPLICA].map((rule) =>
    forProduct(rule, 'workload', (ctx: WorkloadPlanContext) => ctx.rollout),
  ),
];

export function workloadFindings(ctx: WorkloadPlanContext): Finding[] {
  return applyRules(WORKLOAD_RULES, ctx);
}

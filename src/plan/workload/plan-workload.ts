import type { ResolvedWorkloadSpec } from '../../schema/spec-kinds';
import type { TrafficPathSpec, WorkloadSpec } from '../../schema/workload-spec';
import { SEVERITY_RANK, type Finding } from '../../model/finding';
import { PLAN_API_VERSION } from '../plan-gateway';
import { checkTimingBounds } from '../timing-bounds';
import { workloadFindings } from './findings';
import { choosePreStopAction, type PreStopAction } from './prestop-action';
import { planWorkloadRollout, workloadRolloutCheck, type WorkloadRolloutPlan } from './rollout';
import { computeWorkloadTimings, type WorkloadTimingDerivations, type WorkloadTimings } from './timings';
import { propagationDelay } from './traffic-path';

/** What gracegate writes into the app container to set its shutdown timeout, or why it writes nothing. */
export type ShutdownTimeoutSetting =
  | { via: 'env'; name: string; value: string }
  | { via: 'flag'; name: string; value: string }
  | { via: 'fixed'; seconds: number }
  | { via: 'unknown' }
  | { via: 'none' };

/**
 * The plan for an application workload. Pure data, like a gateway's plan: the pod changes, PLAN.md
 * and the constructs read it alone.
 */
export type WorkloadPlan = {
  apiVersion: typeof PLAN_API_VERSION;
  kind: 'GracefulWorkloadPlan';
  workload: {
    kind: WorkloadSpec['spec']['workload']['kind'];
    name: string;
    namespace: string;
    /** The app container; absent: the pod's only container. */
    container?: string;
    /** The pods' labels (spec.workload.selectorLabels, default app: <name>). */
    selectorLabels: Record<string, string>;
  };
  replicas: number;
  trafficPath: TrafficPathSpec;
  preStop: { action: PreStopAction; seconds: number; reason: string };
  shutdownTimeout: ShutdownTimeoutSetting;
  timings: WorkloadTimings;
  derivations: WorkloadTimingDerivations;
  rollout: WorkloadRolloutPlan;
  findings: Finding[];
};

function timeoutSetting(spec: WorkloadSpec, seconds: number): ShutdownTimeoutSetting {
  const app = spec.spec.app;
  if (!app.gracefulShutdown) return { via: 'none' };
  const t = app.shutdownTimeout;
  if (t === undefined) return { via: 'unknown' };
  if (t.via === 'fixed') return { via: 'fixed', seconds: t.seconds };
  return { via: t.via, name: t.name, value: t.format === 'duration' ? `${seconds}s` : String(seconds) };
}

/**
 * Plans the termination of an application workload's pods: the network path's delay, the preStop
 * (form and length), the app's shutdown timeout, the grace period, the rollout and the findings.
 * Pure: no I/O.
 */
export function planWorkload({ spec, given }: ResolvedWorkloadSpec): WorkloadPlan {
  const propagation = propagationDelay(spec.spec.trafficPath, given);
  const derivations = computeWorkloadTimings(spec, propagation, given);
  checkTimingBounds(derivations);
  const timings = Object.fromEntries(Object.entries(derivations).map(([k, v]) => [k, v.value])) as WorkloadTimings;
  const preStop = choosePreStopAction(spec.spec, timings.preStopSeconds);
  const rollout = planWorkloadRollout(spec);
  const findings = workloadFindings({ spec, timings, preStop, propagation, rollout: workloadRolloutCheck(spec, rollout) }).sort(
    (a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity],
  );
  const { workload } = spec.spec;
  return {
    apiVersion: PLAN_API_VERSION,
    kind: 'GracefulWorkloadPlan',
    workload: {
      kind: workload.kind,
      name: spec.metadata.name,
      namespace: spec.metadata.namespace,
      ...(workload.container !== undefined ? { container: workload.container } : {}),
      selectorLabels: workload.selectorLabels ?? { app: spec.metadata.name },
    },
    replicas: spec.spec.replicas,
    trafficPath: spec.spec.trafficPath,
    preStop: { ...preStop, seconds: timings.preStopSeconds },
    shutdownTimeout: timeoutSetting(spec, timings.shutdownTimeoutSeconds),
    timings,
    derivations,
    rollout,
    findings,
  };
}

import { checkRollout, type AntiAffinity, type RolloutCheck } from '../../model/rollout';
import type { WorkloadSpec } from '../../schema/workload-spec';

export type WorkloadRolloutPlan = {
  /** Deployment only: a StatefulSet replaces its pods one at a time, in place. */
  maxSurge: number;
  maxUnavailable: number;
  antiAffinity: AntiAffinity;
  /** PodDisruptionBudget maxUnavailable, or null: none (one replica, or spec.disruptionBudget false). */
  pdbMaxUnavailable: number | null;
  reason: string;
};

/**
 * Strategy, anti-affinity and PDB for an app workload. Unlike a gateway, the pods get no
 * anti-affinity unless the spec asks (the app's scheduling is the app team's). The rollout traps
 * are the gateway's rules (src/model/rollout.ts), with no hostPort: only required anti-affinity
 * puts one pod on a node.
 */
export function planWorkloadRollout(spec: WorkloadSpec): WorkloadRolloutPlan {
  const { replicas, rollout, workload } = spec.spec;
  const antiAffinity: AntiAffinity = rollout.antiAffinity ?? 'none';
  const strategy =
    workload.kind === 'StatefulSet'
      ? { maxSurge: 0, maxUnavailable: 1, reason: 'a StatefulSet replaces one pod at a time, in place (its RollingUpdate has no surge)' }
      : chooseStrategy(rollout, antiAffinity === 'required', nodeCount(spec), replicas);
  return {
    maxSurge: strategy.maxSurge,
    maxUnavailable: strategy.maxUnavailable,
    antiAffinity,
    pdbMaxUnavailable: spec.spec.disruptionBudget && replicas >= 2 ? 1 : null,
    reason: strategy.reason,
  };
}

/** The nodes the pods may run on; the schema requires them with required anti-affinity, and without it none is needed. */
function nodeCount(spec: WorkloadSpec): number {
  return spec.spec.nodes ?? spec.spec.replicas + 1;
}

/** The workload's rollout as the rollout rules judge it: a StatefulSet has no rolling update to surge. */
export function workloadRolloutCheck(spec: WorkloadSpec, rollout: WorkloadRolloutPlan): RolloutCheck {
  const { replicas, workload } = spec.spec;
  const onePodPerNode = rollout.antiAffinity === 'required';
  return checkRollout(
    { kind: 'workload' },
    {
      nodes: nodeCount(spec),
      replicas: { surgeAt: replicas, fewest: replicas, most: replicas },
      onePodPerNode,
      requiredAntiAffinity: onePodPerNode,
      ...(workload.kind === 'StatefulSet' ? {} : { strategy: { maxSurge: rollout.maxSurge, maxUnavailable: rollout.maxUnavailable } }),
    },
  );
}

/**
 * maxSurge and maxUnavailable: the spec's overrides, else surge one pod first (full capacity), or
 * replace in place when one pod fits a node and no node is spare (the surge pod could never run).
 */
function chooseStrategy(
  rollout: { maxSurge?: number | undefined; maxUnavailable?: number | undefined },
  onePodPerNode: boolean,
  nodes: number,
  replicas: number,
): { maxSurge: number; maxUnavailable: number; reason: string } {
  if (rollout.maxSurge !== undefined || rollout.maxUnavailable !== undefined) {
    const maxSurge = rollout.maxSurge ?? (rollout.maxUnavailable === 0 ? 1 : 0);
    return { maxSurge, maxUnavailable: rollout.maxUnavailable ?? (maxSurge === 0 ? 1 : 0), reason: 'spec.rollout overrides' };
  }
  if (onePodPerNode && nodes <= replicas) {
    return {
      maxSurge: 0,
      maxUnavailable: 1,
      reason: `one pod per node (required anti-affinity) and no spare node (${nodes} nodes, ${replicas} replicas): replace in place, one at a time`,
    };
  }
  return {
    maxSurge: 1,
    maxUnavailable: 0,
    reason: onePodPerNode
      ? `a spare node exists (${nodes} nodes, ${replicas} replicas): surge one pod first, keep full capacity`
      : 'pods may share nodes: surge one pod first, keep full capacity',
  };
}

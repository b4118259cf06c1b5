import type { WorkloadSpec } from '../../schema/workload-spec';
import type { Finding } from '../../model/finding';

/** As for a gateway: whether the pods must (required), should (preferred) or may share a node. */
export type AntiAffinity = 'required' | 'preferred' | 'none';

export type WorkloadRolloutPlan = {
  /** Deployment only: a StatefulSet replaces its pods one at a time, in place. */
  maxSurge: number;
  maxUnavailable: number;
  antiAffinity: AntiAffinity;
  /** PodDisruptionBudget maxUnavailable, or null: none (one replica, or spec.disruptionBudget false). */
  pdbMaxUnavailable: number | null;
  reason: string;
  findings: Finding[];
};

/**
 * Strategy, anti-affinity and PDB for an app workload. Unlike a gateway, the pods get no
 * anti-affinity unless the spec asks (the app's scheduling is the app team's). The rollout traps
 * have the gateway's ids and words (src/plan/rollout.ts), with no hostPort: only required
 * anti-affinity puts one pod on a node.
 */
export function planWorkloadRollout(spec: WorkloadSpec): WorkloadRolloutPlan {
  const { replicas, nodes, rollout, workload } = spec.spec;
  const antiAffinity: AntiAffinity = rollout.antiAffinity ?? 'none';
  const onePodPerNode = antiAffinity === 'required';
  // The schema requires nodes with required anti-affinity; without it no node count is needed.
  const nodeCount = nodes ?? replicas + 1;
  const findings: Finding[] = [];
  let strategy: { maxSurge: number; maxUnavailable: number; reason: string };
  if (workload.kind === 'StatefulSet') {
    strategy = { maxSurge: 0, maxUnavailable: 1, reason: 'a StatefulSet replaces one pod at a time, in place (its RollingUpdate has no surge)' };
  } else {
    strategy = chooseStrategy(rollout, onePodPerNode, nodeCount, replicas);
    const deadlock = surgeDeadlock({ replicas, nodes: nodeCount, onePodPerNode, ...strategy });
    if (deadlock) findings.push(deadlock);
    const all = takesAllPods(strategy.maxUnavailable, replicas);
    if (all) findings.push(all);
  }
  const unschedulable = antiAffinityUnschedulable(antiAffinity, replicas, nodeCount);
  if (unschedulable) findings.push(unschedulable);
  if (replicas === 1) {
    findings.push({
      id: 'single-replica',
      severity: 'warning',
      field: 'spec.replicas',
      message: 'one replica: a rollout surges a new pod first, but a node drain or an eviction leaves nothing to serve while the pod terminates, and a PodDisruptionBudget would block the drain',
      remediation: 'run at least 2 replicas',
    });
  }
  return {
    maxSurge: strategy.maxSurge,
    maxUnavailable: strategy.maxUnavailable,
    antiAffinity,
    pdbMaxUnavailable: spec.spec.disruptionBudget && replicas >= 2 ? 1 : null,
    reason: strategy.reason,
    findings,
  };
}

const WHY = 'required anti-affinity';

/**
 * One pod per node, `maxUnavailable: 0` and no node to spare: the surge pod stays Pending forever
 * (docs/facts.md §6).
 */
function surgeDeadlock(r: { replicas: number; nodes: number; onePodPerNode: boolean; maxSurge: number; maxUnavailable: number }): Finding | undefined {
  const { replicas, nodes, onePodPerNode, maxSurge, maxUnavailable } = r;
  if (!(onePodPerNode && maxSurge > 0 && maxUnavailable === 0 && nodes - replicas < maxSurge)) return undefined;
  return {
    id: 'rollout-surge-deadlock',
    severity: 'error',
    field: 'spec.rollout',
    message: `maxUnavailable 0 with maxSurge ${maxSurge}, one pod per node (${WHY}) and ${nodes} nodes for ${replicas} replicas: the surge pod stays Pending forever and the rollout never ends (kubernetes#116891, argo-cd#16627)`,
    remediation: `use maxSurge 0, maxUnavailable 1, or add ${replicas + maxSurge - nodes} node(s)`,
  };
}

/** Required anti-affinity with more replicas than nodes: some pods can never be scheduled. */
function antiAffinityUnschedulable(antiAffinity: AntiAffinity, replicas: number, nodes: number): Finding | undefined {
  if (!(antiAffinity === 'required' && replicas > nodes)) return undefined;
  return {
    id: 'anti-affinity-unschedulable',
    severity: 'error',
    field: 'spec.rollout.antiAffinity',
    message: `required anti-affinity with ${replicas} replicas on ${nodes} nodes: ${replicas - nodes} pod(s) can never be scheduled`,
    remediation: 'use antiAffinity preferred, fewer replicas, or more nodes',
  };
}

/** maxUnavailable that lets a rollout take every replica down at once. */
function takesAllPods(maxUnavailable: number, replicas: number): Finding | undefined {
  if (maxUnavailable < replicas) return undefined;
  return {
    id: 'rollout-takes-all-pods',
    severity: 'error',
    field: 'spec.rollout.maxUnavailable',
    message: `maxUnavailable ${maxUnavailable} lets a rollout take all ${replicas} replica(s) down at once`,
    remediation: `use maxUnavailable ${Math.max(0, replicas - 1)} or less`,
  };
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
    return { maxSurge: 0, maxUnavailable: 1, reason: `one pod per node (${WHY}) and no spare node (${nodes} nodes, ${replicas} replicas): replace in place, one at a time` };
  }
  return {
    maxSurge: 1,
    maxUnavailable: 0,
    reason: onePodPerNode
      ? `a spare node exists (${nodes} nodes, ${replicas} replicas): surge one pod first, keep full capacity`
      : 'pods may share nodes: surge one pod first, keep full capacity',
  };
}

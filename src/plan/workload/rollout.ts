import type { WorkloadSpec } from '../../schema/workload-spec';
import type { Finding } from '../finding';
import { antiAffinityUnschedulable, chooseStrategy, surgeDeadlock, takesAllPods, type AntiAffinity } from '../rollout';

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
 * anti-affinity unless the spec asks (the app's scheduling is the app team's); the surge deadlock
 * and the other rollout traps are the gateway's own rules (src/plan/rollout.ts).
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
    const why = 'required anti-affinity';
    strategy = chooseStrategy({ rollout, onePodPerNode, why, nodes: nodeCount, replicas });
    const deadlock = surgeDeadlock({ replicas, nodes: nodeCount, onePodPerNode, why, ...strategy });
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

import { checkRollout, type AntiAffinity, type RolloutCheck } from '../model/rollout';
import type { FixedReplicasSpec, GatewaySpec } from '../schema/gateway-spec';

export type RolloutPlan = {
  maxSurge: number;
  /** A count, or (autoscaled) a percentage Kubernetes resolves at the current count, rounding down. */
  maxUnavailable: number | `${number}%`;
  antiAffinity: AntiAffinity;
  /** True when at most one gateway pod can run per node (required anti-affinity or hostPort). */
  onePodPerNode: boolean;
  /** PodDisruptionBudget maxUnavailable, or null when a PDB would block node drains. */
  pdbMaxUnavailable: number | null;
  reason: string;
};

/**
 * Strategy and anti-affinity from replicas and nodes. The trap (docs/facts.md §6): one pod per node,
 * `maxUnavailable: 0` and no spare node leaves the surge pod Pending forever (kubernetes#116891).
 * The other way out, replacing in place (`maxSurge: 0, maxUnavailable: 1`), takes the only pod down
 * when there is one: one replica on one node is replaced by a surge pod beside it (preferred
 * anti-affinity), the only rollout that never has zero pods.
 */
export function planRollout(spec: FixedReplicasSpec): RolloutPlan {
  const { replicas, nodes, health, rollout } = spec.spec;
  const hostPort = health.exposure === 'hostPort';
  const loneReplica = replicas === 1 && nodes <= replicas;

  const antiAffinity: AntiAffinity = rollout.antiAffinity ?? (hostPort || (nodes >= replicas && !loneReplica) ? 'required' : 'preferred');
  const onePodPerNode = hostPort || antiAffinity === 'required';
  const spareNode = nodes > replicas;

  let maxSurge: number;
  let maxUnavailable: number;
  let reason: string;
  if (rollout.maxSurge !== undefined || rollout.maxUnavailable !== undefined) {
    maxSurge = rollout.maxSurge ?? (rollout.maxUnavailable === 0 ? 1 : 0);
    maxUnavailable = rollout.maxUnavailable ?? (maxSurge === 0 ? 1 : 0);
    reason = 'spec.rollout overrides';
  } else if (onePodPerNode && !spareNode && replicas > 1) {
    maxSurge = 0;
    maxUnavailable = 1;
    reason = `one pod per node (${hostPort ? 'hostPort' : 'required anti-affinity'}) and no spare node (${nodes} nodes, ${replicas} replicas): replace in place, one at a time`;
  } else {
    maxSurge = 1;
    maxUnavailable = 0;
    reason = onePodPerNode
      ? `a spare node exists (${nodes} nodes, ${replicas} replicas): surge one pod first, keep full capacity`
      : loneReplica && rollout.antiAffinity === undefined
        ? 'one replica on one node: surge one pod beside it (preferred anti-affinity), so the rollout never has zero pods'
        : 'pods may share nodes: surge one pod first, keep full capacity';
  }
  return {
    maxSurge,
    maxUnavailable,
    antiAffinity,
    onePodPerNode,
    pdbMaxUnavailable: replicas >= 2 ? 1 : null,
    reason,
  };
}

/**
 * The gateway's rollout as the rollout rules judge it (src/model/rollout.ts): at its fixed count, or
 * over the HPA's whole range (the surge at maxReplicas, the pods kept at minReplicas).
 */
export function gatewayRolloutCheck(spec: GatewaySpec, rollout: RolloutPlan): RolloutCheck {
  const { nodes, health, autoscaling } = spec.spec;
  const hostPort = health.exposure === 'hostPort';
  const [fewest, most] = autoscaling ? [autoscaling.minReplicas, autoscaling.maxReplicas] : [spec.spec.replicas!, spec.spec.replicas!];
  const overridden = spec.spec.rollout.maxSurge !== undefined || spec.spec.rollout.maxUnavailable !== undefined;
  return checkRollout(autoscaling ? { kind: 'autoscaled', hostPort, overridden } : { kind: 'gateway', hostPort }, {
    nodes,
    replicas: { surgeAt: most, fewest, most },
    onePodPerNode: rollout.onePodPerNode,
    requiredAntiAffinity: rollout.antiAffinity === 'required',
    strategy: { maxSurge: rollout.maxSurge, maxUnavailable: rollout.maxUnavailable },
  });
}

import type { GatewaySpec } from '../schema/gateway-spec';
import type { Finding } from './finding';

export type AntiAffinity = 'required' | 'preferred' | 'none';

export type RolloutPlan = {
  maxSurge: number;
  maxUnavailable: number;
  antiAffinity: AntiAffinity;
  /** True when at most one gateway pod can run per node (required anti-affinity or hostPort). */
  onePodPerNode: boolean;
  /** PodDisruptionBudget maxUnavailable, or null when a PDB would block node drains. */
  pdbMaxUnavailable: number | null;
  reason: string;
  findings: Finding[];
};

/**
 * Strategy and anti-affinity from replicas and nodes. The trap (docs/facts.md §6): one pod per node,
 * `maxUnavailable: 0` and no spare node leaves the surge pod Pending forever (kubernetes#116891).
 */
export function planRollout(spec: GatewaySpec): RolloutPlan {
  const { replicas, nodes, health, rollout } = spec.spec;
  const findings: Finding[] = [];
  const hostPort = health.exposure === 'hostPort';

  const antiAffinity: AntiAffinity = rollout.antiAffinity ?? (hostPort || nodes >= replicas ? 'required' : 'preferred');
  const onePodPerNode = hostPort || antiAffinity === 'required';
  const spareNode = nodes > replicas;

  let maxSurge: number;
  let maxUnavailable: number;
  let reason: string;
  if (rollout.maxSurge !== undefined || rollout.maxUnavailable !== undefined) {
    maxSurge = rollout.maxSurge ?? (rollout.maxUnavailable === 0 ? 1 : 0);
    maxUnavailable = rollout.maxUnavailable ?? (maxSurge === 0 ? 1 : 0);
    reason = 'spec.rollout overrides';
  } else if (onePodPerNode && !spareNode) {
    maxSurge = 0;
    maxUnavailable = 1;
    reason = `one pod per node (${hostPort ? 'hostPort' : 'required anti-affinity'}) and no spare node (${nodes} nodes, ${replicas} replicas): replace in place, one at a time`;
  } else {
    maxSurge = 1;
    maxUnavailable = 0;
    reason = onePodPerNode
      ? `a spare node exists (${nodes} nodes, ${replicas} replicas): surge one pod first, keep full capacity`
      : 'pods may share nodes: surge one pod first, keep full capacity';
  }

  if (onePodPerNode && maxSurge > 0 && maxUnavailable === 0 && nodes - replicas < maxSurge) {
    findings.push({
      id: 'rollout-surge-deadlock',
      severity: 'error',
      field: 'spec.rollout',
      message: `maxUnavailable 0 with maxSurge ${maxSurge}, one pod per node (${hostPort ? 'hostPort' : 'required anti-affinity'}) and ${nodes} nodes for ${replicas} replicas: the surge pod stays Pending forever and the rollout never ends (kubernetes#116891, argo-cd#16627)`,
      remediation: `use maxSurge 0, maxUnavailable 1, or add ${replicas + maxSurge - nodes} node(s)`,
    });
  }
  if (antiAffinity === 'required' && replicas > nodes) {
    findings.push({
      id: 'anti-affinity-unschedulable',
      severity: 'error',
      field: 'spec.rollout.antiAffinity',
      message: `required anti-affinity with ${replicas} replicas on ${nodes} nodes: ${replicas - nodes} pod(s) can never be scheduled`,
      remediation: 'use antiAffinity preferred, fewer replicas, or more nodes',
    });
  }
  if (replicas === 1) {
    findings.push({
      id: 'single-replica',
      severity: 'warning',
      field: 'spec.replicas',
      message: 'one replica: while it drains the LB has no other backend, so any termination without a surge pod ready first loses new requests; a PodDisruptionBudget would block node drains',
      remediation: 'run at least 2 replicas',
    });
  }
  if (maxUnavailable >= replicas) {
    findings.push({
      id: 'rollout-takes-all-pods',
      severity: 'error',
      field: 'spec.rollout.maxUnavailable',
      message: `maxUnavailable ${maxUnavailable} lets a rollout take all ${replicas} replica(s) down at once`,
      remediation: `use maxUnavailable ${Math.max(0, replicas - 1)} or less`,
    });
  }
  return {
    maxSurge,
    maxUnavailable,
    antiAffinity,
    onePodPerNode,
    pdbMaxUnavailable: replicas >= 2 ? 1 : null,
    reason,
    findings,
  };
}

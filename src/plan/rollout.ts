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

  const why = hostPort ? 'hostPort' : 'required anti-affinity';
  const { maxSurge, maxUnavailable, reason } = chooseStrategy({ rollout, onePodPerNode, why, nodes, replicas });
  findings.push(...[
    surgeDeadlock({ replicas, nodes, onePodPerNode, why, maxSurge, maxUnavailable }),
    antiAffinityUnschedulable(antiAffinity, replicas, nodes),
  ].filter((f): f is Finding => f !== undefined));
  if (replicas === 1) {
    findings.push({
      id: 'single-replica',
      severity: 'warning',
      field: 'spec.replicas',
      message: 'one replica: while it drains the LB has no other backend, so any termination without a surge pod ready first loses new requests; a PodDisruptionBudget would block node drains',
      remediation: 'run at least 2 replicas',
    });
  }
  const all = takesAllPods(maxUnavailable, replicas);
  if (all) findings.push(all);
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

/** What the surge-deadlock rule reads: the counts, and why at most one pod fits a node. */
export type SurgeInput = { replicas: number; nodes: number; onePodPerNode: boolean; why: string; maxSurge: number; maxUnavailable: number };

/**
 * One pod per node, `maxUnavailable: 0` and no node to spare: the surge pod stays Pending forever
 * (docs/facts.md §6). Shared by every kind of spec.
 */
export function surgeDeadlock({ replicas, nodes, onePodPerNode, why, maxSurge, maxUnavailable }: SurgeInput): Finding | undefined {
  if (!(onePodPerNode && maxSurge > 0 && maxUnavailable === 0 && nodes - replicas < maxSurge)) return undefined;
  return {
    id: 'rollout-surge-deadlock',
    severity: 'error',
    field: 'spec.rollout',
    message: `maxUnavailable 0 with maxSurge ${maxSurge}, one pod per node (${why}) and ${nodes} nodes for ${replicas} replicas: the surge pod stays Pending forever and the rollout never ends (kubernetes#116891, argo-cd#16627)`,
    remediation: `use maxSurge 0, maxUnavailable 1, or add ${replicas + maxSurge - nodes} node(s)`,
  };
}

/** Required anti-affinity with more replicas than nodes: some pods can never be scheduled. */
export function antiAffinityUnschedulable(antiAffinity: AntiAffinity, replicas: number, nodes: number): Finding | undefined {
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
export function takesAllPods(maxUnavailable: number, replicas: number): Finding | undefined {
  if (maxUnavailable < replicas) return undefined;
  return {
    id: 'rollout-takes-all-pods',
    severity: 'error',
    field: 'spec.rollout.maxUnavailable',
    message: `maxUnavailable ${maxUnavailable} lets a rollout take all ${replicas} replica(s) down at once`,
    remediation: `use maxUnavailable ${Math.max(0, replicas - 1)} or less`,
  };
}

export type StrategyChoice = { maxSurge: number; maxUnavailable: number; reason: string };

/**
 * maxSurge and maxUnavailable: the spec's overrides, else surge one pod first (full capacity), or
 * replace in place when one pod fits a node and no node is spare (the surge pod could never run).
 */
export function chooseStrategy(input: {
  rollout: { maxSurge?: number | undefined; maxUnavailable?: number | undefined };
  onePodPerNode: boolean;
  why: string;
  nodes: number;
  replicas: number;
}): StrategyChoice {
  const { rollout, onePodPerNode, why, nodes, replicas } = input;
  if (rollout.maxSurge !== undefined || rollout.maxUnavailable !== undefined) {
    const maxSurge = rollout.maxSurge ?? (rollout.maxUnavailable === 0 ? 1 : 0);
    return { maxSurge, maxUnavailable: rollout.maxUnavailable ?? (maxSurge === 0 ? 1 : 0), reason: 'spec.rollout overrides' };
  }
  if (onePodPerNode && nodes <= replicas) {
    return { maxSurge: 0, maxUnavailable: 1, reason: `one pod per node (${why}) and no spare node (${nodes} nodes, ${replicas} replicas): replace in place, one at a time` };
  }
  return {
    maxSurge: 1,
    maxUnavailable: 0,
    reason: onePodPerNode
      ? `a spare node exists (${nodes} nodes, ${replicas} replicas): surge one pod first, keep full capacity`
      : 'pods may share nodes: surge one pod first, keep full capacity',
  };
}

import { removeAt, setAt, specPath, type Fix } from '../core/fix';
import type { FindingText, SharedRule } from './finding';

/*
 * Whether a rollout can run at all, computed once for every product that has one: a gateway with a
 * fixed count (src/plan/rollout.ts), an autoscaled gateway over its whole range (src/plan/scaling.ts),
 * an app workload (src/plan/workload/rollout.ts) and the Deployments lint reads (src/lint/rules/rollout.ts).
 * The traps (docs/facts.md §6): one pod per node, `maxUnavailable: 0` and no spare node leaves the
 * surge pod Pending forever (kubernetes#116891); a maxUnavailable of every replica empties the
 * Deployment; required anti-affinity with more pods than nodes leaves pods Pending.
 */

/** Whether the pods must (required), should (preferred) or may share a node. */
export type AntiAffinity = 'required' | 'preferred' | 'none';

/** What a rollout is made of, in numbers. */
export type RolloutFacts = {
  nodes: number;
  /**
   * The counts the checks read: the surge pod must find a node at `surgeAt`; a rollout must keep a
   * pod at `fewest`; every pod must find a node up to `most` (all three the replica count, unless an
   * autoscaler moves it).
   */
  replicas: { surgeAt: number; fewest: number; most: number };
  /** At most one pod per node: required anti-affinity, or a hostPort. */
  onePodPerNode: boolean;
  /** Required anti-affinity: pods beyond the node count stay Pending. */
  requiredAntiAffinity: boolean;
  /** The rolling update's strategy; absent where pods are replaced otherwise (a StatefulSet, Recreate): nothing surges. */
  strategy?: { maxSurge: number; maxUnavailable: number | `${number}%` };
};

/** What stops a rollout; null or false where nothing does. */
export type RolloutFeasibility = {
  /** The surge pod has no node to go to at `surgeAt` replicas: the nodes it lacks. */
  surgeDeadlock: { missingNodes: number } | null;
  /** maxUnavailable takes every pod down at the fewest replicas. */
  takesAllPods: boolean;
  /** Pods that can never be scheduled at the most replicas. */
  unschedulable: { pods: number } | null;
};

/** What a maxUnavailable value resolves to at `count` replicas (percent: rounded down, as Kubernetes does). */
export function resolveMaxUnavailable(value: number | string, count: number): number {
  return typeof value === 'number' ? value : Math.floor((count * Number.parseInt(value, 10)) / 100);
}

/**
 * maxUnavailable as a percentage that resolves, at the current count n, to 0 while a node is spare
 * (n < nodes: surge instead) and to 1 once every node holds a pod (n = nodes: the surge pod cannot
 * land, so one old pod goes first). Kubernetes rounds a maxUnavailable percentage down. Exact up to
 * 10 nodes; beyond, a count just below the node count may also take one pod down.
 */
export function unavailablePercentFor(nodes: number): `${number}%` {
  return `${Math.min(99, Math.ceil(100 / nodes))}%`;
}

export function rolloutFeasibility(f: RolloutFacts): RolloutFeasibility {
  const { nodes, replicas, strategy } = f;
  const surge = strategy?.maxSurge ?? 0;
  const deadlocked =
    strategy !== undefined &&
    f.onePodPerNode &&
    surge > 0 &&
    resolveMaxUnavailable(strategy.maxUnavailable, replicas.surgeAt) === 0 &&
    nodes - replicas.surgeAt < surge;
  return {
    surgeDeadlock: deadlocked ? { missingNodes: replicas.surgeAt + surge - nodes } : null,
    takesAllPods: strategy !== undefined && resolveMaxUnavailable(strategy.maxUnavailable, replicas.fewest) >= replicas.fewest,
    unschedulable: f.requiredAntiAffinity && replicas.most > nodes ? { pods: replicas.most - nodes } : null,
  };
}

/** Who has the rollout, for the words: each product says it in its own terms. */
export type RolloutSubject =
  /** A gateway with a fixed replica count. */
  | { kind: 'gateway'; hostPort: boolean }
  /** An autoscaled gateway, judged at every count of the HPA's range. */
  | { kind: 'autoscaled'; hostPort: boolean; overridden: boolean }
  | { kind: 'workload' }
  /** A Deployment in manifests lint reads: the strategy as written, why one pod per node, where the count came from. */
  | { kind: 'manifest'; maxSurgeText: string; maxUnavailableText: string; onePerNodeReason: string; replicasSource: string };

/** A rollout as the rollout rules read it: who has it, its numbers, and what stops it. */
export type RolloutCheck = { subject: RolloutSubject; facts: RolloutFacts; feasibility: RolloutFeasibility };

export function checkRollout(subject: RolloutSubject, facts: RolloutFacts): RolloutCheck {
  return { subject, facts, feasibility: rolloutFeasibility(facts) };
}

/** The products whose spec has a rollout (lint names the object and path itself). */
type Product = 'gateway' | 'workload';
type RolloutRule<P extends Product = Product> = SharedRule<RolloutCheck, P>;

/** The spec path of a rollout field, as a fix edits it. */
const R = (key: string) => specPath(`spec.rollout.${key}`);

const why = (hostPort: boolean) => (hostPort ? 'hostPort' : 'required anti-affinity');

export const ROLLOUT_SURGE_DEADLOCK: RolloutRule = {
  id: 'rollout-surge-deadlock',
  severity: 'error',
  field: { gateway: 'spec.rollout', workload: 'spec.rollout' },
  check: ({ subject: s, facts: f, feasibility }) => {
    const deadlock = feasibility.surgeDeadlock;
    if (!deadlock || !f.strategy) return undefined;
    const { maxSurge, maxUnavailable } = f.strategy;
    const { nodes } = f;
    const replicas = f.replicas.surgeAt;
    switch (s.kind) {
      case 'gateway': {
        const fixes: Fix[] = [];
        if (replicas > 1)
          fixes.push({ description: 'replace in place: maxSurge 0, maxUnavailable 1', edits: [setAt(R('maxSurge'), 0), setAt(R('maxUnavailable'), 1)] });
        if (!s.hostPort)
          fixes.push({
            description: 'preferred anti-affinity: the surge pod may share a node while the rollout runs',
            edits: [setAt(R('antiAffinity'), 'preferred')],
          });
        fixes.push({ description: `add ${deadlock.missingNodes} node(s)`, edits: [setAt(specPath('spec.nodes'), replicas + maxSurge)] });
        return {
          message:
            `maxUnavailable 0 with maxSurge ${maxSurge}, one pod per node (${why(s.hostPort)}) and ${nodes} nodes for ${replicas} replicas: the surge pod stays Pending forever and the rollout never ends (kubernetes#116891, argo-cd#16627)` +
            (replicas === 1 ? '; replacing in place (maxUnavailable 1) is no way out with one replica: it takes the only pod down' : ''),
          remediation: [
            ...(replicas > 1 ? ['use maxSurge 0, maxUnavailable 1'] : []),
            ...(!s.hostPort ? ['antiAffinity preferred (the surge pod may then share a node while the rollout runs)'] : []),
            `add ${deadlock.missingNodes} node(s)`,
          ].join(', or '),
          fixes,
        };
      }
      case 'autoscaled':
        return {
          message: `maxUnavailable ${maxUnavailable} with maxSurge ${maxSurge}, one pod per node (${why(s.hostPort)}) and ${nodes} nodes: once the HPA runs ${nodes - maxSurge + 1} or more replicas (maxReplicas ${replicas}) the surge pod stays Pending forever and the rollout never ends (kubernetes#116891, argo-cd#16627)`,
          remediation: `remove the spec.rollout overrides maxSurge and maxUnavailable (gracegate then sets maxUnavailable ${unavailablePercentFor(Math.max(2, nodes))}, which resolves to 1 only when no node is spare), or add ${deadlock.missingNodes} node(s)`,
        };
      case 'workload':
        return {
          message: `maxUnavailable 0 with maxSurge ${maxSurge}, one pod per node (${why(false)}) and ${nodes} nodes for ${replicas} replicas: the surge pod stays Pending forever and the rollout never ends (kubernetes#116891, argo-cd#16627)`,
          remediation: `use maxSurge 0, maxUnavailable 1, or add ${deadlock.missingNodes} node(s)`,
        };
      case 'manifest':
        return {
          message: `maxUnavailable ${s.maxUnavailableText} with maxSurge ${s.maxSurgeText} (${maxSurge} pod), ${s.onePerNodeReason}, and ${nodes} nodes for ${replicas} replicas: the surge pod stays Pending and the rollout never ends`,
          remediation: `maxSurge 0 and maxUnavailable 1, or ${deadlock.missingNodes} more node(s)`,
        };
    }
  },
};

export const ANTI_AFFINITY_UNSCHEDULABLE: RolloutRule = {
  id: 'anti-affinity-unschedulable',
  severity: 'error',
  field: { gateway: 'spec.rollout.antiAffinity', workload: 'spec.rollout.antiAffinity' },
  check: ({ subject: s, facts: f, feasibility }) => {
    const unschedulable = feasibility.unschedulable;
    if (!unschedulable) return undefined;
    const { nodes } = f;
    const replicas = f.replicas.most;
    switch (s.kind) {
      case 'gateway':
        return {
          message: `required anti-affinity with ${replicas} replicas on ${nodes} nodes: ${unschedulable.pods} pod(s) can never be scheduled`,
          remediation: `use antiAffinity preferred, or add ${unschedulable.pods} node(s), or run ${nodes} replicas`,
          fixes: [
            { description: 'preferred anti-affinity', edits: [setAt(R('antiAffinity'), 'preferred')] },
            { description: `add ${unschedulable.pods} node(s)`, edits: [setAt(specPath('spec.nodes'), replicas)] },
          ],
        };
      case 'workload':
        return {
          message: `required anti-affinity with ${replicas} replicas on ${nodes} nodes: ${unschedulable.pods} pod(s) can never be scheduled`,
          remediation: 'use antiAffinity preferred, fewer replicas, or more nodes',
        };
      case 'manifest':
        return {
          message: `${s.onePerNodeReason} and up to ${replicas} replicas (${s.replicasSource}) on ${nodes} nodes: ${unschedulable.pods} pod(s) can never be scheduled`,
          remediation: 'preferred anti-affinity, at most as many replicas (and autoscaler maxReplicas) as nodes, or more nodes',
        };
      case 'autoscaled':
        // The HPA's range has its own words: autoscale-anti-affinity-blocks-scale-up.
        return undefined;
    }
  },
};

export const AUTOSCALE_ANTI_AFFINITY_BLOCKS_SCALE_UP: RolloutRule<'gateway'> = {
  id: 'autoscale-anti-affinity-blocks-scale-up',
  severity: 'error',
  field: { gateway: 'spec.rollout.antiAffinity' },
  check: ({ subject: s, facts: { nodes, replicas }, feasibility }) =>
    s.kind === 'autoscaled' && !s.hostPort && feasibility.unschedulable
      ? {
          message: `required anti-affinity allows one gateway pod per node: on ${nodes} node(s) the HPA can run ${nodes} of its maxReplicas ${replicas.most}, and pods beyond that stay Pending exactly when the load needs them`,
          remediation: `use antiAffinity preferred, or maxReplicas ${nodes}, or ${replicas.most} nodes`,
        }
      : undefined,
};

export const ROLLOUT_TAKES_ALL_PODS: RolloutRule = {
  id: 'rollout-takes-all-pods',
  severity: 'error',
  field: { gateway: 'spec.rollout.maxUnavailable', workload: 'spec.rollout.maxUnavailable' },
  check: ({ subject: s, facts: f, feasibility }) => {
    if (!feasibility.takesAllPods || !f.strategy) return undefined;
    const { maxUnavailable } = f.strategy;
    const replicas = f.replicas.fewest;
    switch (s.kind) {
      case 'gateway':
        return takesAllPods({ replicas, nodes: f.nodes, hostPort: s.hostPort, maxUnavailable, onePodPerNode: f.onePodPerNode });
      case 'autoscaled':
        return {
          message: `maxUnavailable ${maxUnavailable} lets a rollout at minReplicas (${replicas}) take all ${replicas} replica(s) down at once`,
          remediation: takesAllRemedy(replicas, s.overridden, s.hostPort),
        };
      case 'workload':
        return {
          message: `maxUnavailable ${maxUnavailable} lets a rollout take all ${replicas} replica(s) down at once`,
          remediation: `use maxUnavailable ${Math.max(0, replicas - 1)} or less`,
        };
      case 'manifest':
        return undefined;
    }
  },
};

export const SINGLE_REPLICA: RolloutRule = {
  id: 'single-replica',
  severity: 'warning',
  field: { gateway: 'spec.replicas', workload: 'spec.replicas' },
  check: ({ subject: s, facts: f }) => {
    if (f.replicas.fewest !== 1) return undefined;
    switch (s.kind) {
      case 'gateway': {
        const needsNode = (s.hostPort || f.requiredAntiAffinity) && f.nodes < 2;
        return {
          message:
            'one replica: while it drains the LB has no other backend, so any termination without a surge pod ready first loses new requests; a PodDisruptionBudget would block node drains',
          remediation: `run at least 2 replicas${needsNode ? ` (and, with ${why(s.hostPort)}, 2 nodes)` : ''}`,
          fixes: [{ description: 'two replicas', edits: [setAt(specPath('spec.replicas'), 2), ...(needsNode ? [setAt(specPath('spec.nodes'), 2)] : [])] }],
        };
      }
      case 'workload':
        return {
          message:
            'one replica: a rollout surges a new pod first, but a node drain or an eviction leaves nothing to serve while the pod terminates, and a PodDisruptionBudget would block the drain',
          remediation: 'run at least 2 replicas',
        };
      default:
        // An autoscaled gateway at one replica: autoscale-min-one.
        return undefined;
    }
  },
};

export const AUTOSCALE_MIN_ONE: RolloutRule<'gateway'> = {
  id: 'autoscale-min-one',
  severity: 'warning',
  field: { gateway: 'spec.autoscaling.minReplicas' },
  check: ({ subject: s, facts: f }) =>
    s.kind === 'autoscaled' && f.replicas.fewest === 1
      ? {
          message:
            'minReplicas 1: whenever the HPA is down to one pod, a termination the Deployment does not surge for (a node drain, an eviction, a node failure) leaves the LB no other backend, so new requests are lost while that pod drains',
          remediation: `use minReplicas 2${f.replicas.most < 2 ? ' and maxReplicas 2' : ''}${f.onePodPerNode && f.nodes < 2 ? ' (and, with one pod per node, 2 nodes)' : ''}`,
        }
      : undefined,
};

/**
 * maxUnavailable that empties the Deployment. With two replicas or more the fix is a smaller
 * maxUnavailable; with one, only a surge keeps a pod, and a surge pod needs a node to land on: a
 * shared one (preferred anti-affinity, not possible with hostPort) or a spare one.
 */
function takesAllPods(r: { replicas: number; nodes: number; hostPort: boolean; maxUnavailable: number | string; onePodPerNode: boolean }): FindingText {
  const message = `maxUnavailable ${r.maxUnavailable} lets a rollout take all ${r.replicas} replica(s) down at once`;
  if (r.replicas > 1) {
    return {
      message,
      remediation: `use maxUnavailable ${r.replicas - 1} or less`,
      fixes: [{ description: `maxUnavailable ${r.replicas - 1}`, edits: [setAt(R('maxUnavailable'), r.replicas - 1)] }],
    };
  }
  const surge = [setAt(R('maxSurge'), 1), setAt(R('maxUnavailable'), 0)];
  if (!r.onePodPerNode || r.nodes > r.replicas) {
    return { message, remediation: 'surge instead: maxSurge 1, maxUnavailable 0', fixes: [{ description: 'surge one pod first', edits: surge }] };
  }
  const fixes: Fix[] = [];
  const words: string[] = [];
  if (!r.hostPort) {
    fixes.push({ description: 'surge one pod beside the old one (preferred anti-affinity)', edits: [...surge, setAt(R('antiAffinity'), 'preferred')] });
    words.push('surge with antiAffinity preferred (maxSurge 1, maxUnavailable 0: the surge pod shares the node while the rollout runs)');
  }
  fixes.push({ description: 'surge onto a second node', edits: [...surge, setAt(specPath('spec.nodes'), 2)] });
  words.push('surge onto a second node (maxSurge 1, maxUnavailable 0, and add 1 node)');
  if (r.hostPort) {
    fixes.push({
      description: 'expose health through a NodePort and surge beside the old pod',
      edits: [...surge, setAt(R('antiAffinity'), 'preferred'), setAt(specPath('spec.health.exposure'), 'nodePort'), removeAt(specPath('spec.health.hostPort'))],
    });
    words.push('exposure nodePort (a hostPort allows one pod per node) with antiAffinity preferred and a surge');
  }
  return {
    message: `${message}; with one pod per node (${r.hostPort ? 'hostPort' : 'required anti-affinity'}) and ${r.nodes} node(s) a surge pod has nowhere to go, so only a change of both keeps a pod serving`,
    remediation: words.join(', or '),
    fixes,
  };
}

/**
 * The way out of a rollout that empties the Deployment at minReplicas: a smaller maxUnavailable,
 * gracegate's own strategy (which surges where a node is spare), or, on one node with one pod per
 * node, a surge pod that shares the node.
 */
function takesAllRemedy(min: number, overridden: boolean, hostPort: boolean): string {
  if (min >= 2) return `use maxUnavailable ${min - 1} or less${overridden ? ', or remove the spec.rollout overrides' : ''}`;
  if (overridden) return 'remove the spec.rollout overrides (gracegate then surges one pod first at one replica)';
  return hostPort
    ? 'use exposure nodePort with antiAffinity preferred (a surge pod may then share the node), or add a node'
    : 'use antiAffinity preferred (a surge pod may then share the node), or add a node';
}

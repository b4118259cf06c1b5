import type { FixedReplicasSpec } from '../schema/gateway-spec';
import { removeAt, setAt, specPath, type Fix } from '../core/fix';
import type { Finding } from '../model/finding';

export type AntiAffinity = 'required' | 'preferred' | 'none';

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
  findings: Finding[];
};

/** The spec path of a rollout, nodes or replicas field, as a fix edits it. */
const R = (key: string) => specPath(`spec.rollout.${key}`);

/**
 * Strategy and anti-affinity from replicas and nodes. The trap (docs/facts.md §6): one pod per node,
 * `maxUnavailable: 0` and no spare node leaves the surge pod Pending forever (kubernetes#116891).
 * The other way out, replacing in place (`maxSurge: 0, maxUnavailable: 1`), takes the only pod down
 * when there is one: one replica on one node is replaced by a surge pod beside it (preferred
 * anti-affinity), the only rollout that never has zero pods.
 */
export function planRollout(spec: FixedReplicasSpec): RolloutPlan {
  const { replicas, nodes, health, rollout } = spec.spec;
  const findings: Finding[] = [];
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
  const why = hostPort ? 'hostPort' : 'required anti-affinity';

  if (onePodPerNode && maxSurge > 0 && maxUnavailable === 0 && nodes - replicas < maxSurge) {
    const missing = replicas + maxSurge - nodes;
    const fixes: Fix[] = [];
    if (replicas > 1) fixes.push({ description: 'replace in place: maxSurge 0, maxUnavailable 1', edits: [setAt(R('maxSurge'), 0), setAt(R('maxUnavailable'), 1)] });
    if (!hostPort) fixes.push({ description: 'preferred anti-affinity: the surge pod may share a node while the rollout runs', edits: [setAt(R('antiAffinity'), 'preferred')] });
    fixes.push({ description: `add ${missing} node(s)`, edits: [setAt(specPath('spec.nodes'), replicas + maxSurge)] });
    findings.push({
      id: 'rollout-surge-deadlock',
      severity: 'error',
      field: 'spec.rollout',
      message: `maxUnavailable 0 with maxSurge ${maxSurge}, one pod per node (${why}) and ${nodes} nodes for ${replicas} replicas: the surge pod stays Pending forever and the rollout never ends (kubernetes#116891, argo-cd#16627)`
        + (replicas === 1 ? '; replacing in place (maxUnavailable 1) is no way out with one replica: it takes the only pod down' : ''),
      remediation: [
        ...(replicas > 1 ? ['use maxSurge 0, maxUnavailable 1'] : []),
        ...(!hostPort ? ['antiAffinity preferred (the surge pod may then share a node while the rollout runs)'] : []),
        `add ${missing} node(s)`,
      ].join(', or '),
      fixes,
    });
  }
  if (antiAffinity === 'required' && replicas > nodes) {
    findings.push({
      id: 'anti-affinity-unschedulable',
      severity: 'error',
      field: 'spec.rollout.antiAffinity',
      message: `required anti-affinity with ${replicas} replicas on ${nodes} nodes: ${replicas - nodes} pod(s) can never be scheduled`,
      remediation: `use antiAffinity preferred, or add ${replicas - nodes} node(s), or run ${nodes} replicas`,
      fixes: [
        { description: 'preferred anti-affinity', edits: [setAt(R('antiAffinity'), 'preferred')] },
        { description: `add ${replicas - nodes} node(s)`, edits: [setAt(specPath('spec.nodes'), replicas)] },
      ],
    });
  }
  if (replicas === 1) {
    const needsNode = (hostPort || antiAffinity === 'required') && nodes < 2;
    findings.push({
      id: 'single-replica',
      severity: 'warning',
      field: 'spec.replicas',
      message: 'one replica: while it drains the LB has no other backend, so any termination without a surge pod ready first loses new requests; a PodDisruptionBudget would block node drains',
      remediation: `run at least 2 replicas${needsNode ? ` (and, with ${why}, 2 nodes)` : ''}`,
      fixes: [{ description: 'two replicas', edits: [setAt(specPath('spec.replicas'), 2), ...(needsNode ? [setAt(specPath('spec.nodes'), 2)] : [])] }],
    });
  }
  if (maxUnavailable >= replicas) {
    findings.push({ id: 'rollout-takes-all-pods', severity: 'error', field: 'spec.rollout.maxUnavailable', ...takesAllPods({ replicas, nodes, hostPort, maxUnavailable, onePodPerNode }) });
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

/**
 * maxUnavailable that empties the Deployment. With two replicas or more the fix is a smaller
 * maxUnavailable; with one, only a surge keeps a pod, and a surge pod needs a node to land on: a
 * shared one (preferred anti-affinity, not possible with hostPort) or a spare one.
 */
function takesAllPods(r: { replicas: number; nodes: number; hostPort: boolean; maxUnavailable: number; onePodPerNode: boolean }): Pick<Finding, 'message' | 'remediation' | 'fixes'> {
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

import { ANTI_AFFINITY_UNSCHEDULABLE, checkRollout, ROLLOUT_SURGE_DEADLOCK, type RolloutCheck } from '../../model/rollout';
import type { LintContext } from '../context';
import { at, objAt, type LintObject } from '../objects';
import type { PodView } from '../pod-view';
import type { LintFindingDraft, LintRule } from '../rule';
import { isZero, onePerNode, replicasOf, rollingUpdate } from './common';

/**
 * A Deployment's rollout as the planner's rollout rules judge it (src/model/rollout.ts), where its
 * pods run one per node: the strategy as written, at its replica count (spec.replicas, else the
 * autoscaler's minimum), every pod placed up to the autoscaler's maximum.
 */
function rolloutOf(
  ctx: LintContext,
  pod: PodView,
  nodes: number,
):
  | { check: RolloutCheck; one: NonNullable<ReturnType<typeof onePerNode>>; replicas: ReturnType<typeof replicasOf>; ru: ReturnType<typeof rollingUpdate> }
  | undefined {
  const one = onePerNode(pod);
  if (!one) return undefined;
  const replicas = replicasOf(ctx, pod);
  const ru = rollingUpdate(pod, replicas.value);
  const check = checkRollout(
    {
      kind: 'manifest',
      maxSurgeText: JSON.stringify(ru?.surgeRaw),
      maxUnavailableText: JSON.stringify(ru?.unavailableRaw),
      onePerNodeReason: one.reason,
      replicasSource: replicas.source,
    },
    {
      nodes,
      replicas: { surgeAt: replicas.value, fewest: replicas.value, most: replicas.max },
      onePodPerNode: true,
      requiredAntiAffinity: true,
      ...(ru ? { strategy: { maxSurge: ru.maxSurge, maxUnavailable: ru.maxUnavailable } } : {}),
    },
  );
  return { check, one, replicas, ru };
}

function intOrPercent(v: unknown, of: number, up: boolean): number | undefined {
  if (typeof v === 'number') return v;
  const m = typeof v === 'string' ? /^(\d+)%$/.exec(v) : null;
  return m ? (up ? Math.ceil : Math.floor)((Number(m[1]) * of) / 100) : undefined;
}

export const ROLLOUT_RULES: LintRule[] = [
  {
    id: 'rollout-surge-and-unavailable-zero',
    severity: 'error',
    summary: 'a RollingUpdate with maxSurge 0 and maxUnavailable 0',
    rationale:
      'The API server refuses a Deployment whose maxUnavailable is 0 when maxSurge is 0 (kubernetes pkg/apis/apps/validation: "may not be 0 when maxSurge is 0"): the apply fails, and with it the release that carries it. The usual intent, replacing one pod at a time, is maxSurge 0 and maxUnavailable 1 (docs/facts.md §6).',
    check: (ctx) =>
      ctx.pods.flatMap((pod) => {
        const ru = rollingUpdate(pod, 1);
        if (!ru || !isZero(ru.surgeRaw) || !isZero(ru.unavailableRaw)) return [];
        const path = ['spec', 'strategy', 'rollingUpdate', 'maxUnavailable'];
        return [
          {
            object: pod.owner,
            path,
            message: `maxSurge ${JSON.stringify(ru.surgeRaw)} and maxUnavailable ${JSON.stringify(ru.unavailableRaw)}: the API server refuses the Deployment`,
            remediation: 'maxUnavailable 1 with maxSurge 0 (one pod at a time, in place), or maxSurge 1 with maxUnavailable 0 where a spare node exists',
            fix: { description: 'maxUnavailable 1', edits: [{ object: pod.owner.id, path, set: 1 }] },
          },
        ];
      }),
  },
  {
    id: ROLLOUT_SURGE_DEADLOCK.id,
    severity: ROLLOUT_SURGE_DEADLOCK.severity,
    summary: 'maxUnavailable 0 and a surge pod that has no node to go to (one pod per node; needs the node count: --spec or --nodes)',
    rationale:
      'With one gateway pod per node (required anti-affinity on the hostname, or a hostPort) and no spare node, the surge pod of maxUnavailable 0 stays Pending forever and the rollout never ends (kubernetes#116891, argo-cd#16627; docs/facts.md §6).',
    check: (ctx) => {
      const nodes = ctx.nodes;
      if (!nodes) return [];
      return ctx.pods.flatMap((pod) => {
        const rollout = rolloutOf(ctx, pod, nodes.value);
        const text = rollout && ROLLOUT_SURGE_DEADLOCK.check(rollout.check);
        if (!rollout || !text || !rollout.ru) return [];
        const { one, replicas, ru } = rollout;
        return [
          {
            object: pod.owner,
            path: ['spec', 'strategy'],
            message: text.message,
            remediation: text.remediation,
            numbers: {
              nodes: { value: nodes.value, source: nodes.source },
              replicas: { value: replicas.value, source: replicas.source },
              maxSurge: { value: ru.maxSurge, source: `${pod.owner.id} spec.strategy` },
            },
            formula: 'nodes - replicas >= maxSurge (when maxUnavailable is 0 and one pod per node)',
            related: [{ object: pod.owner, path: one.path }],
            fix: {
              description: 'maxSurge 0, maxUnavailable 1',
              edits: [{ object: pod.owner.id, path: ['spec', 'strategy'], set: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } } }],
            },
          },
        ];
      });
    },
  },
  {
    id: ANTI_AFFINITY_UNSCHEDULABLE.id,
    severity: ANTI_AFFINITY_UNSCHEDULABLE.severity,
    summary: 'required pod anti-affinity with more replicas (or autoscaler maximum) than nodes (needs the node count: --spec or --nodes)',
    rationale:
      'Required anti-affinity on the hostname allows one such pod per node: the replicas beyond the node count stay Pending, and an autoscaler that scales past it adds only Pending pods (docs/facts.md §6).',
    check: (ctx) => {
      const nodes = ctx.nodes;
      if (!nodes) return [];
      return ctx.pods.flatMap((pod) => {
        const rollout = rolloutOf(ctx, pod, nodes.value);
        const text = rollout && ANTI_AFFINITY_UNSCHEDULABLE.check(rollout.check);
        if (!rollout || !text) return [];
        const { one, replicas } = rollout;
        return [
          {
            object: pod.owner,
            path: one.path,
            message: text.message,
            remediation: text.remediation,
            numbers: { nodes: { value: nodes.value, source: nodes.source }, replicas: { value: replicas.max, source: replicas.source } },
            formula: 'replicas <= nodes',
          },
        ];
      });
    },
  },
  {
    id: 'pdb-blocks-eviction',
    severity: 'error',
    summary: 'a PodDisruptionBudget that allows no eviction: maxUnavailable 0, minAvailable of every pod, or two budgets over one pod',
    rationale:
      'A node drain evicts pods through the eviction API, which refuses while a budget allows no disruption, and refuses outright a pod that more than one budget selects (kubernetes pkg/registry/core/pod/storage/eviction.go: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support"). Node drains then hang. gracegate writes its own budget: leave istio/gateway\'s podDisruptionBudget empty beside it (docs/manifests.md).',
    check: (ctx) => {
      const drafts: LintFindingDraft[] = [];
      const seen = new Set<LintObject>();
      for (const pod of ctx.pods) {
        const budgets = ctx.budgetsOf(pod);
        const replicas = replicasOf(ctx, pod);
        for (const pdb of budgets) {
          if (seen.has(pdb)) continue;
          const spec = objAt(pdb.value, ['spec']);
          if (spec.maxUnavailable !== undefined && (isZero(spec.maxUnavailable) || intOrPercent(spec.maxUnavailable, replicas.value, true) === 0)) {
            seen.add(pdb);
            drafts.push({
              object: pdb,
              path: ['spec', 'maxUnavailable'],
              message: `${pdb.id} maxUnavailable ${JSON.stringify(spec.maxUnavailable)} allows no eviction of ${pod.owner.id}'s pods: node drains hang`,
              remediation: 'maxUnavailable 1',
              fix: { description: 'maxUnavailable 1', edits: [{ object: pdb.id, path: ['spec', 'maxUnavailable'], set: 1 }] },
            });
          } else if (spec.minAvailable !== undefined && (intOrPercent(spec.minAvailable, replicas.value, true) ?? 0) >= replicas.value) {
            seen.add(pdb);
            drafts.push({
              object: pdb,
              path: ['spec', 'minAvailable'],
              message: `${pdb.id} minAvailable ${JSON.stringify(spec.minAvailable)} with ${replicas.value} replica(s) (${replicas.source}) allows no eviction: node drains hang`,
              remediation: `minAvailable below the replica count, or maxUnavailable 1 instead`,
              numbers: { replicas: { value: replicas.value, source: replicas.source } },
            });
          }
        }
        if (budgets.length >= 2 && !seen.has(budgets[1]!)) {
          budgets.slice(1).forEach((b) => seen.add(b));
          drafts.push({
            object: budgets[1]!,
            path: ['spec', 'selector'],
            message: `${budgets.map((b) => b.id).join(' and ')} both select ${pod.owner.id}'s pods: the eviction API refuses a pod with more than one budget, so no node drain can move them`,
            remediation: "keep one budget per pod (with gracegate: its own, and istio/gateway's podDisruptionBudget value left empty)",
            related: [{ object: budgets[0]!, path: ['spec', 'selector'] }],
          });
        }
      }
      return drafts;
    },
  },
  {
    id: 'hpa-with-replicas',
    severity: 'warning',
    summary: 'a HorizontalPodAutoscaler scales a workload whose manifest also sets spec.replicas',
    rationale:
      'Every apply of the manifest (helm upgrade, an Argo CD sync) resets the replica count the autoscaler chose, so a release can start by scaling the gateway down under load before the autoscaler scales it back; the Kubernetes docs tell you to remove spec.replicas from a workload an HPA manages (kubernetes.io, "Horizontal Pod Autoscaling", migrating Deployments to horizontal scaling). Silent on a live object (`kubectl get -o yaml`, which carries metadata.resourceVersion): the API server always stores spec.replicas, there the count the autoscaler set, not one an apply writes.',
    check: (ctx) =>
      ctx.pods.flatMap((pod) => {
        const hpa = ctx.autoscalerOf(pod);
        // A live object always has spec.replicas (the API server defaults it; the HPA sets it through the scale subresource).
        if (!hpa || pod.replicas === undefined || at(pod.owner.value, ['metadata', 'resourceVersion']) !== undefined) return [];
        return [
          {
            object: pod.owner,
            path: ['spec', 'replicas'],
            message: `${hpa.id} scales ${pod.owner.id} between ${at(hpa.value, ['spec', 'minReplicas']) ?? 1} and ${at(hpa.value, ['spec', 'maxReplicas'])}, and the manifest also sets replicas ${pod.replicas}: each apply resets the count the autoscaler chose`,
            remediation: 'remove spec.replicas (istio/gateway does when autoscaling.enabled is true), or remove the autoscaler',
            related: [{ object: hpa, path: ['spec', 'scaleTargetRef'] }],
            fix: { description: 'remove spec.replicas', edits: [{ object: pod.owner.id, path: ['spec', 'replicas'], remove: true as const }] },
          },
        ];
      }),
  },
];

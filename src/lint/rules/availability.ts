import { AUTOSCALE_MIN_ONE, checkRollout } from '../../model/rollout';
import { isObject, type Path } from '../../core/json';
import type { LintContext } from '../context';
import { at, listAt, objAt, selectorMatches } from '../objects';
import type { PodView } from '../pod-view';
import type { LintRule } from '../rule';
import { onePerNode, replicasOf } from './common';

/*
 * What keeps a gateway serving while its pods leave for reasons other than a rollout: node drains
 * (a cluster upgrade, the cluster autoscaler) and node failures. Each pod's termination runs the
 * whole sequence; what matters here is how many leave at once, and that one is always left.
 */

/** The kinds whose pods a PodDisruptionBudget protects and a node may hold several of. */
const REPLICATED = new Set(['Deployment', 'StatefulSet']);

/** The gateways with more than one pod (now, or when their autoscaler scales up). */
function replicated(ctx: LintContext): Array<{ pod: PodView; replicas: ReturnType<typeof replicasOf> }> {
  return ctx.gateways.flatMap((pod) => {
    const replicas = replicasOf(ctx, pod);
    return REPLICATED.has(pod.owner.kind) && replicas.max >= 2 ? [{ pod, replicas }] : [];
  });
}

const HOSTNAME = 'kubernetes.io/hostname';

/**
 * What spreads the pods over nodes short of one per node: a preferred anti-affinity term or a
 * topology spread constraint on the hostname that selects the pod itself. Undefined when nothing does.
 */
function spreadOf(pod: PodView): string | undefined {
  const preferred = listAt(pod.spec, ['affinity', 'podAntiAffinity', 'preferredDuringSchedulingIgnoredDuringExecution']);
  if (preferred.some((t) => at(t, ['podAffinityTerm', 'topologyKey']) === HOSTNAME && selectorMatches(at(t, ['podAffinityTerm', 'labelSelector']), pod.labels)))
    return 'preferred pod anti-affinity';
  const spread = listAt(pod.spec, ['topologySpreadConstraints']);
  if (spread.some((c) => isObject(c) && c.topologyKey === HOSTNAME && selectorMatches(c.labelSelector, pod.labels))) return 'a topology spread constraint';
  return undefined;
}

export const AVAILABILITY_RULES: LintRule[] = [
  {
    id: 'pdb-missing',
    severity: 'warning',
    summary: 'a gateway of more than one pod that no PodDisruptionBudget selects',
    rationale:
      'A node drain (a cluster upgrade, the cluster autoscaler) evicts through the eviction API, which without a budget evicts every pod it is asked for: draining the nodes of two gateway pods at once takes both out of the LB together, and each runs its whole termination sequence while the LB has fewer backends or none (kubernetes.io, "Specifying a Disruption Budget for your Application"). gracegate writes a budget of maxUnavailable 1 beside the pods (docs/manifests.md).',
    check: (ctx) =>
      replicated(ctx)
        .filter(({ pod }) => ctx.budgetsOf(pod).length === 0)
        .map(({ pod, replicas }) => ({
          object: pod.owner,
          path: [...pod.metaPath, 'labels'],
          message: `no PodDisruptionBudget selects ${pod.owner.id}'s pods (up to ${replicas.max}, ${replicas.source}): a node drain may evict all of them at once, each running its termination sequence while the LB loses its backends`,
          remediation: `add a PodDisruptionBudget with maxUnavailable 1 selecting ${JSON.stringify(pod.labels)} (gracegate synth writes one in manifests.yaml)`,
          numbers: { replicas: { value: replicas.max, source: replicas.source } },
        })),
  },
  {
    id: 'replicas-may-share-node',
    severity: 'warning',
    summary: 'a gateway of more than one pod with nothing that spreads its pods over nodes (no pod anti-affinity, topology spread or hostPort)',
    rationale:
      'Without anti-affinity or a topology spread constraint on kubernetes.io/hostname the scheduler may put every gateway pod on one node; that node failing or being drained then takes the whole gateway out of the LB at once, replicas or not (kubernetes.io, "Assigning Pods to Nodes", inter-pod anti-affinity). Preferred anti-affinity spreads them where nodes allow and never leaves a pod Pending (docs/facts.md §6).',
    check: (ctx) =>
      replicated(ctx)
        .filter(({ pod }) => !onePerNode(pod) && !spreadOf(pod))
        .map(({ pod, replicas }) => {
          const antiAffinity: Path = [...pod.specPath, 'affinity', 'podAntiAffinity'];
          const preferredTerm = { weight: 100, podAffinityTerm: { topologyKey: HOSTNAME, labelSelector: { matchLabels: pod.labels } } };
          return {
            object: pod.owner,
            path: [...pod.specPath, 'affinity'],
            message: `${pod.owner.id}'s ${replicas.max} pods (${replicas.source}) have no pod anti-affinity, topology spread constraint or hostPort on ${HOSTNAME}: the scheduler may place them all on one node, and that node's drain or failure takes every one out of the LB at once`,
            remediation: `add preferred pod anti-affinity on ${HOSTNAME} selecting the pods' own labels (required where there are at least as many nodes as pods)`,
            numbers: { replicas: { value: replicas.max, source: replicas.source } },
            // Only where the pod has no preferred anti-affinity list to overwrite.
            ...(at(pod.owner.value, [...antiAffinity, 'preferredDuringSchedulingIgnoredDuringExecution']) === undefined
              ? {
                  fix: {
                    description: 'preferred pod anti-affinity on the hostname',
                    edits: [{ object: pod.owner.id, path: [...antiAffinity, 'preferredDuringSchedulingIgnoredDuringExecution'], set: [preferredTerm] }],
                  },
                }
              : {}),
          };
        }),
  },
  {
    id: AUTOSCALE_MIN_ONE.id,
    severity: AUTOSCALE_MIN_ONE.severity,
    summary: "a HorizontalPodAutoscaler that may scale a gateway down to one pod (minReplicas 1, or unset: Kubernetes' default)",
    rationale:
      'An HPA at one pod leaves the LB a single backend: a termination the Deployment does not surge for (a node drain, an eviction, a node failure) then loses new requests while that pod drains. The planner raises the same finding on spec.autoscaling (docs/autoscaling.md); kubernetes.io, "Horizontal Pod Autoscaling", for the default of 1.',
    check: (ctx) =>
      ctx.gateways.flatMap((pod) => {
        const hpa = ctx.autoscalerOf(pod);
        if (!hpa) return [];
        const replicas = replicasOf(ctx, pod);
        const one = onePerNode(pod);
        const text = AUTOSCALE_MIN_ONE.check(
          checkRollout(
            { kind: 'autoscaled', hostPort: one?.reason.startsWith('hostPort') === true, overridden: false },
            {
              nodes: ctx.nodes?.value ?? Number.POSITIVE_INFINITY,
              replicas: { surgeAt: replicas.max, fewest: Number(at(hpa.value, ['spec', 'minReplicas']) ?? 1), most: replicas.max },
              onePodPerNode: one !== undefined,
              requiredAntiAffinity: one !== undefined && !one.reason.startsWith('hostPort'),
            },
          ),
        );
        if (!text) return [];
        const maxReplicas = objAt(hpa.value, ['spec']).maxReplicas;
        return [
          {
            object: hpa,
            path: ['spec', 'minReplicas'],
            message: text.message,
            remediation: text.remediation,
            numbers: { minReplicas: { value: Number(at(hpa.value, ['spec', 'minReplicas']) ?? 1), source: `${hpa.id} spec.minReplicas` } },
            related: [{ object: pod.owner, path: ['metadata', 'name'] }],
            fix: {
              description: 'minReplicas 2',
              edits: [
                { object: hpa.id, path: ['spec', 'minReplicas'], set: 2 },
                ...(typeof maxReplicas === 'number' && maxReplicas < 2 ? [{ object: hpa.id, path: ['spec', 'maxReplicas'], set: 2 }] : []),
              ],
            },
          },
        ];
      }),
  },
];

import { GracegateError } from '../../core/errors';
import type { WorkloadPlan } from '../../plan/workload/plan-workload';
import { podDisruptionBudget } from '../extra-objects';
import type { Affinity, DeploymentStrategy, K8sObject, PodAffinityTerm } from '../k8s';
import { hostnameAntiAffinity } from '../k8s-shapes';
import { MANAGED_BY_LABEL } from '../names';

/** The preStop handler gracegate puts on the app container: the kubelet's sleep, or `sleep` run in the container. */
export type PreStopHandler = { sleep: { seconds: number } } | { exec: { command: string[] } };

/**
 * What a workload plan requires of the app's pods, decided once, as plain data: every delivery
 * path (post-render, the Kustomize component, the cdk8s-plus construct) is a projection of this.
 */
export type WorkloadChanges = {
  workload: { kind: 'Deployment' | 'StatefulSet'; name: string; namespace: string };
  /** The app container by name; absent: the pod's only container. */
  container?: string;
  selectorLabels: Record<string, string>;
  replicas: number;
  /** null: no preStop (the plan waits 0 s), and any preStop the container had is removed. */
  preStop: PreStopHandler | null;
  /** Environment variables set on the app container (its shutdown timeout, when read from one). */
  env: Array<{ name: string; value: string }>;
  /** A `--flag=value` argument set on the app container (its shutdown timeout, when taken as a flag). */
  flag: { name: string; value: string } | null;
  terminationGracePeriodSeconds: number;
  /** Deployment only; a StatefulSet keeps its own update strategy. */
  strategy: DeploymentStrategy | null;
  affinity: Affinity | null;
  disruptionBudget: { name: string; maxUnavailable: number } | null;
};

export class WorkloadChangesError extends GracegateError {}

/** Longest workload name whose PDB name (`<name>-gracegate`) is still a valid DNS label. */
export const MAX_WORKLOAD_NAME_LENGTH = 63 - '-gracegate'.length;

function preStopHandler(plan: WorkloadPlan): PreStopHandler | null {
  const { action, seconds } = plan.preStop;
  switch (action) {
    case 'sleep':
      return { sleep: { seconds } };
    case 'exec':
      return { exec: { command: ['sleep', String(seconds)] } };
    case 'none':
      return null;
  }
}

function affinity(plan: WorkloadPlan): Affinity | null {
  const term: PodAffinityTerm = { labelSelector: { matchLabels: { ...plan.workload.selectorLabels } }, topologyKey: 'kubernetes.io/hostname' };
  return hostnameAntiAffinity(plan.rollout.antiAffinity, term);
}

/** The pod changes a workload plan requires. Pure. */
export function workloadChanges(plan: WorkloadPlan): WorkloadChanges {
  const { kind, name, namespace, container, selectorLabels } = plan.workload;
  if (name.length > MAX_WORKLOAD_NAME_LENGTH) {
    throw new WorkloadChangesError(
      `metadata.name '${name}' is ${name.length} characters; gracegate derives '${name}-gracegate' (the PodDisruptionBudget) from it, so it must be at most ${MAX_WORKLOAD_NAME_LENGTH}`,
    );
  }
  const timeout = plan.shutdownTimeout;
  return {
    workload: { kind, name, namespace },
    ...(container !== undefined ? { container } : {}),
    selectorLabels: { ...selectorLabels },
    replicas: plan.replicas,
    preStop: preStopHandler(plan),
    env: timeout.via === 'env' ? [{ name: timeout.name, value: timeout.value }] : [],
    flag: timeout.via === 'flag' ? { name: timeout.name, value: timeout.value } : null,
    terminationGracePeriodSeconds: plan.timings.terminationGracePeriodSeconds,
    strategy:
      kind === 'Deployment' ? { type: 'RollingUpdate', rollingUpdate: { maxSurge: plan.rollout.maxSurge, maxUnavailable: plan.rollout.maxUnavailable } } : null,
    affinity: affinity(plan),
    disruptionBudget: plan.rollout.pdbMaxUnavailable === null ? null : { name: `${name}-gracegate`, maxUnavailable: plan.rollout.pdbMaxUnavailable },
  };
}

/** The objects beside the workload: its PodDisruptionBudget, if the plan has one. */
export function workloadExtraObjects(changes: WorkloadChanges): K8sObject[] {
  const pdb = changes.disruptionBudget;
  if (!pdb) return [];
  const meta = { name: pdb.name, namespace: changes.workload.namespace, labels: { ...changes.selectorLabels, ...MANAGED_BY_LABEL } };
  return [podDisruptionBudget(meta, changes.selectorLabels, pdb.maxUnavailable)];
}

/**
 * The app's args with `--flag=value` set: an existing `--flag=x` or `--flag x` is replaced in
 * place, otherwise the flag is appended. Applying twice changes nothing.
 */
export function withFlag(args: readonly string[], flag: { name: string; value: string }): string[] {
  const out = [...args];
  const at = out.findIndex((a) => a === flag.name || a.startsWith(`${flag.name}=`));
  if (at < 0) return [...out, `${flag.name}=${flag.value}`];
  if (out[at] === flag.name && at + 1 < out.length && !out[at + 1]!.startsWith('-')) out.splice(at, 2, `${flag.name}=${flag.value}`);
  else out[at] = `${flag.name}=${flag.value}`;
  return out;
}

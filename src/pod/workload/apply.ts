import { isObject } from '../../core/json';
import { ApplyPodChangesError, objectAt, upsertByName, type ApplyOptions } from '../apply';
import type { K8sObject } from '../k8s';
import { withFlag, type WorkloadChanges } from './pod-changes';

type AnyObject = Record<string, unknown>;

/**
 * Index of the app container in `containers`: by name, or the only one. Throws naming what is
 * there when neither picks one.
 */
export function appContainerIndex(containers: unknown[], changes: WorkloadChanges, where: string): number {
  const names = containers.map((c) => (isObject(c) ? String(c.name) : '?'));
  if (changes.container !== undefined) {
    const at = names.indexOf(changes.container);
    if (at < 0)
      throw new ApplyPodChangesError(`${where} has no container '${changes.container}' (spec.workload.container); it has ${names.join(', ') || 'none'}`);
    return at;
  }
  if (containers.length !== 1) {
    throw new ApplyPodChangesError(`${where} has ${containers.length} containers (${names.join(', ')}): name the app's in spec.workload.container`);
  }
  return 0;
}

/**
 * Applies a workload's pod changes to its Deployment or StatefulSet (JSON), returning a new object:
 * the app container's preStop (replaced whole: one handler only), its shutdown timeout (env or
 * flag), the grace period, the Deployment strategy, the anti-affinity, and the replicas. Fields
 * gracegate does not own are kept; applying twice changes nothing. The one implementation of "put
 * the workload changes into a workload", for the post-renderer and the cdk8s-plus construct alike.
 */
export function applyWorkloadChanges(workload: K8sObject, changes: WorkloadChanges, options: ApplyOptions = {}): K8sObject {
  const out = structuredClone(workload) as K8sObject & AnyObject;
  const where = `${out.kind}/${out.metadata?.name ?? '?'}`;
  const spec = objectAt(out, 'spec');
  if (!isObject(spec.template)) throw new ApplyPodChangesError(`${where} has no spec.template`);
  if (options.setReplicas ?? true) spec.replicas = changes.replicas;
  if (changes.strategy && out.kind === 'Deployment') spec.strategy = structuredClone(changes.strategy);

  const pod = objectAt(spec.template as AnyObject, 'spec');
  pod.terminationGracePeriodSeconds = changes.terminationGracePeriodSeconds;
  if (changes.affinity) objectAt(pod, 'affinity').podAntiAffinity = structuredClone(changes.affinity.podAntiAffinity);

  const containers = Array.isArray(pod.containers) ? [...pod.containers] : [];
  const at = appContainerIndex(containers, changes, where);
  const app = withPreStop(containers[at] as AnyObject, changes.preStop);
  if (changes.env.length > 0) app.env = upsertByName(app.env, changes.env);
  if (changes.flag) app.args = withFlag(Array.isArray(app.args) ? app.args.map(String) : [], changes.flag);
  containers[at] = app;
  pod.containers = containers;
  return out;
}

/**
 * A copy of a container (JSON) with the plan's preStop: replaced whole (a preStop holds one
 * handler), or removed when the plan has none; its other lifecycle hooks are kept.
 */
export function withPreStop(container: AnyObject, preStop: WorkloadChanges['preStop']): AnyObject {
  const out = structuredClone(container);
  const lifecycle = isObject(out.lifecycle) ? { ...out.lifecycle } : {};
  if (preStop) lifecycle.preStop = structuredClone(preStop);
  else delete lifecycle.preStop;
  if (Object.keys(lifecycle).length > 0) out.lifecycle = lifecycle;
  else delete out.lifecycle;
  return out;
}

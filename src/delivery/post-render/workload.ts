import { GracegateError } from '../../core/errors';
import { applyWorkloadChanges } from '../../pod/workload/apply';
import type { K8sObject } from '../../pod/k8s';
import { workloadExtraObjects, type WorkloadChanges } from '../../pod/workload/pod-changes';
import { describeObject, parseManifestStream, renderManifestStream } from '../manifest-stream';
import { edit, PostRenderError, withObjects } from '../stream-edit';
import { autoscalerOf, podLabelsOf, type PostRenderOptions } from './post-render';
import { selectTarget } from '../target';

export type WorkloadPostRenderOptions = PostRenderOptions & {
  /**
   * Leave the replica count to an HPA that scales the workload (--keep-replicas). A workload spec
   * has no autoscaling block yet (a gateway spec describes its HPA in spec.autoscaling instead).
   */
  keepReplicas?: boolean;
};

/**
 * The post-renderer for an application workload: the workload changes put into the Deployment or
 * StatefulSet of a rendered stream (by `applyWorkloadChanges`, the function the cdk8s-plus
 * construct uses too), its PodDisruptionBudget appended, every other document written back byte
 * for byte. Same stream handling as the gateway's post-renderer; only the target and the changes differ.
 */
export function postRenderWorkload(text: string, changes: WorkloadChanges, options: WorkloadPostRenderOptions): string {
  const stream = parseManifestStream(text, options.source ?? 'stdin');
  const target = selectTarget(stream.docs, options.target, changes.workload.kind);
  const t = target.object!;
  const where = describeObject(t);
  const namespace = (t.metadata as Record<string, unknown>).namespace;
  if (typeof namespace === 'string' && namespace !== changes.workload.namespace) {
    throw new PostRenderError(
      `${where} is in namespace '${namespace}' but the spec's metadata.namespace is '${changes.workload.namespace}': the PodDisruptionBudget would land apart from the pods; set metadata.namespace to '${namespace}'`,
    );
  }
  const podLabels = podLabelsOf(t);
  const missing = Object.entries(changes.selectorLabels).filter(([k, v]) => podLabels[k] !== v);
  if (missing.length > 0 && (changes.disruptionBudget || changes.affinity)) {
    throw new PostRenderError(
      `${where}: its pod labels lack ${missing.map(([k, v]) => `${k}=${v}`).join(', ')}, which the PodDisruptionBudget and anti-affinity select; set spec.workload.selectorLabels to the workload's spec.selector.matchLabels`,
    );
  }
  const hpa = autoscalerOf(stream.docs, t);
  if (hpa && !options.keepReplicas) {
    throw new PostRenderError(
      `${describeObject(hpa.object!)} scales ${where}: pass --keep-replicas to leave the replica count to the HPA (the rollout and PDB are planned for spec.replicas, ${changes.replicas})`,
    );
  }
  try {
    edit(target, applyWorkloadChanges(t as K8sObject, changes, { setReplicas: !options.keepReplicas }) as Record<string, unknown>);
  } catch (err) {
    if (err instanceof GracegateError) throw err.locate(where);
    throw err;
  }
  return renderManifestStream(stream, withObjects(stream.docs, workloadExtraObjects(changes)));
}

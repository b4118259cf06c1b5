import { JsonPatch, type ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { applyPodChanges } from '../../pod/apply';
import type { K8sObject } from '../../pod/k8s';
import type { PodChanges } from '../../pod/pod-changes';
import { HcConfigMap } from './hc-config-map';

export interface HcSidecarProps {
  /** The pod changes of the gateway (from `podChanges(plan)`). */
  readonly changes: PodChanges;
  /**
   * The gateway workload to add the sidecar to: any ApiObject with a pod template (a plain
   * `ApiObject` or a generated `KubeDeployment`) whose containers include the proxy container
   * (`spec.envoy.containerName`, default istio-proxy).
   */
  readonly workload: ApiObject;
  /**
   * Also set `spec.replicas` from the spec's fixed count. @default true. When the spec autoscales
   * (spec.autoscaling) `spec.replicas` is removed instead: the HPA owns the count.
   */
  readonly setReplicas?: boolean;
  /**
   * Create the hc ConfigMap the sidecar mounts. @default true — the pod does not start without it;
   * set false only when another construct (e.g. a second HcSidecar on the same gateway) creates it.
   */
  readonly configMap?: boolean;
}

/**
 * Adds gracegate to an existing gateway workload: the hc sidecar, the istio-proxy hold, volumes,
 * grace period, strategy, minReadySeconds, anti-affinity and pod annotations, all from the pod changes, through the
 * same `applyPodChanges` the post-renderer uses.
 *
 * The workload's body is read once, here: an ApiObject's body is fixed at construction, so the
 * only later changes are JSON patches, which apply on top of this one.
 */
export class HcSidecar extends Construct {
  readonly configMap?: HcConfigMap;

  constructor(scope: Construct, id: string, props: HcSidecarProps) {
    super(scope, id);
    const current = props.workload.toJson() as K8sObject;
    const applied = applyPodChanges(current, props.changes, { setReplicas: props.setReplicas ?? true });
    props.workload.addJsonPatch(JsonPatch.replace('/spec', applied.spec));
    if (props.configMap ?? true) this.configMap = new HcConfigMap(this, 'Config', { changes: props.changes });
  }
}

import { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import type { K8sObject } from '../../pod/k8s';

/**
 * Every object gracegate synthesises is a plain ApiObject with a full body, built from the pod
 * changes. Why not cdk8s-plus-28: its Service lacks `externalTrafficPolicy`, its typed objects drop
 * fields unknown to the 1.28 schema after JSON patches (cdk8s#2172), and it injects defaults we did
 * not choose (resources, imagePullPolicy Always, a startup probe) that would then differ from what
 * the values overlay and the post-renderer emit. The bodies come from `src/pod/`, so all three
 * delivery paths emit the same fields.
 */
export function apiObjectOf(scope: Construct, id: string, body: K8sObject): ApiObject {
  return new ApiObject(scope, id, body);
}

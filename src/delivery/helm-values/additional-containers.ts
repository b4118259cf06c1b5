import type { PodChanges } from '../../pod/pod-changes';
import { podValues } from './pod-values';

/**
 * Values overlay for an in-house gateway chart with an `additionalContainers`-style hook, such as
 * `charts/gateway-additional-containers/` (same key names as istio/gateway). Every key the pod
 * changes need is assumed present; the chart in `charts/` is the reference and the test target.
 */
export function additionalContainersOverlay(changes: PodChanges): Record<string, unknown> {
  return podValues(changes);
}

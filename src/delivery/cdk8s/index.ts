/**
 * The cdk8s constructs (`GracefulGateway`, `HcSidecar`, …, `GracefulWorkload`): `applyPodChanges`
 * on the construct's own Deployment, in the user's cdk8s app. The constructs are the library's
 * (src/delivery/library.ts); this description loads none of them, so no command loads cdk8s.
 */
import type { DeliveryPath } from '../path';

export const cdk8sPath: DeliveryPath<'cdk8s'> = {
  name: 'cdk8s',
  how: "`applyPodChanges` on the construct's Deployment, in your cdk8s app",
  docs: 'docs/delivery.md#cdk8s-as-a-library',
  plugin: null,
  synth: null,
};

/**
 * The post-renderer (`gracegate post-render`, Helm 3's --post-renderer script, Helm 4's plugin):
 * `applyPodChanges` on the rendered workload, synced into the YAML tree; every other document is
 * written back byte for byte.
 */
import type { DeliveryPath } from '../path';

export const postRenderPath: DeliveryPath<'post-render'> = {
  name: 'post-render',
  how: '`applyPodChanges` on the rendered Deployment, synced into the YAML tree (Helm 3, Helm 4)',
  docs: 'docs/delivery.md#the-post-renderer-gracegate-post-render',
  plugin: 'plugins/post-render',
  synth: null,
};

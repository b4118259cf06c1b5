/**
 * The Argo CD config management plugin (plugins/argocd/: the CMP v2 plugin.yaml, the repo-server
 * sidecar): `gracegate argocd generate` renders the app with helm and post-renders it.
 */
import type { DeliveryPath } from '../path';

export const argocdPath: DeliveryPath<'argocd'> = {
  name: 'argocd',
  how: 'a config management plugin: helm template, then the post-renderer, inside the repo-server',
  docs: 'docs/delivery.md#argo-cd-config-management-plugin',
  plugin: 'plugins/argocd',
  synth: null,
};

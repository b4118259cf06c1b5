/** The Kustomize component: strategic-merge patches and the objects beside them (`gracegate synth --kustomize`). */
import type { DeliveryPath, SynthPart, SynthRequest } from '../path';

/** The component under kustomize/ (its code loaded only here); a Gateway API gateway's is the gateway-api path's. */
function synth(request: SynthRequest): SynthPart | null {
  if (!request.kustomize) return null;
  if (request.kind === 'GracefulGateway' && request.changes.gatewayApi) return null;
  const component =
    request.kind === 'GracefulGateway'
      ? (require('./component') as typeof import('./component')).kustomizeComponent(request.changes)
      : (require('./workload-component') as typeof import('./workload-component')).workloadKustomizeComponent(request.changes);
  return { files: Object.fromEntries(Object.entries(component).map(([path, text]) => [`kustomize/${path}`, text])) };
}

export const kustomizePath: DeliveryPath<'kustomize'> = {
  name: 'kustomize',
  how: 'strategic-merge patches and resources in a Kustomize component (also as a Helm post-renderer)',
  docs: 'docs/delivery.md#kustomize',
  plugin: 'plugins/kustomize',
  synth,
};

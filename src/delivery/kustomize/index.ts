/** The Kustomize component: strategic-merge patches and the objects beside them (`gracegate synth --kustomize`). */
import type { DeliveryPath, SynthPart, SynthRequest } from '../path';
import { kustomizeComponent } from './component';
import { workloadKustomizeComponent } from './workload-component';

/** The component under kustomize/; a Gateway API gateway's is the gateway-api path's. */
function synth(request: SynthRequest): SynthPart | null {
  if (!request.kustomize) return null;
  if (request.kind === 'GracefulGateway' && request.changes.gatewayApi) return null;
  const component = request.kind === 'GracefulGateway' ? kustomizeComponent(request.changes) : workloadKustomizeComponent(request.changes);
  return { files: Object.fromEntries(Object.entries(component).map(([path, text]) => [`kustomize/${path}`, text])) };
}

export const kustomizePath: DeliveryPath<'kustomize'> = {
  name: 'kustomize',
  how: 'strategic-merge patches and resources in a Kustomize component (also as a Helm post-renderer)',
  docs: 'docs/delivery.md#kustomize',
  plugin: 'plugins/kustomize',
  synth,
};

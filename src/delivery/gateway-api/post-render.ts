/**
 * A Gateway API gateway post-rendered (gracegate post-render, the Argo CD plugin): istiod deploys
 * its pods, so the stream holds the Gateway, not a Deployment.
 */
import { asObject } from '../../core/json';
import type { PodChanges } from '../../pod';
import { describeObject, parseManifestStream, renderManifestStream } from '../manifest-stream';
import { edit, PostRenderError, withObjects } from '../stream-edit';
import { isHelmHook } from '../target';
import { gatewayApiManifestObjects, gatewayParametersObject } from './parameters';

type Obj = Record<string, unknown>;

/**
 * A Gateway API gateway: istiod deploys its pods, so there is no Deployment in the stream. The
 * Gateway gets the parametersRef (class defaults need none), and the parameters ConfigMap, the hc
 * ConfigMap and the health Service are appended. A Gateway that already names another ConfigMap is
 * refused: it names one, and silently replacing it would drop the user's customisations.
 */
export function postRenderGatewayApi(text: string, changes: PodChanges, source: string): string {
  const stream = parseManifestStream(text, source);
  const g = changes.gatewayApi!;
  const params = gatewayParametersObject(changes);
  if (!g.classDefaults) {
    const gateways = stream.docs.filter(
      (d) =>
        d.object &&
        d.object.kind === 'Gateway' &&
        String(d.object.apiVersion).startsWith('gateway.networking.k8s.io/') &&
        !isHelmHook(d.object) &&
        asObject(d.object.metadata).name === changes.gateway.name,
    );
    if (gateways.length !== 1) {
      throw new PostRenderError(
        `expected one Gateway named '${changes.gateway.name}' (the spec's metadata.name) in the input, found ${gateways.length}: gracegate points it at the parameters ConfigMap`,
      );
    }
    const gw = gateways[0]!;
    const where = describeObject(gw.object!);
    const spec = asObject(gw.object!.spec);
    const namespace = asObject(gw.object!.metadata).namespace;
    if (typeof namespace === 'string' && namespace !== changes.gateway.namespace) {
      throw new PostRenderError(
        `${where} is in namespace '${namespace}' but the spec's metadata.namespace is '${changes.gateway.namespace}': a parametersRef names a ConfigMap in the Gateway's own namespace`,
      );
    }
    if (spec.gatewayClassName !== g.className) {
      throw new PostRenderError(
        `${where} has gatewayClassName '${String(spec.gatewayClassName)}' but the spec plans for class '${g.className}' (spec.chart.gatewayClassName): istiod names the Deployment and reads class defaults by it`,
      );
    }
    const ref = asObject(asObject(spec.infrastructure).parametersRef);
    if (Object.keys(ref).length > 0 && (ref.kind !== 'ConfigMap' || ref.name !== params.metadata.name)) {
      throw new PostRenderError(
        `${where} already names ${String(ref.kind)} '${String(ref.name)}' in spec.infrastructure.parametersRef, and a Gateway names one: merge yours with gracegate's (gracegate synth --parameters <that ConfigMap>) and deliver the result, or remove the reference`,
      );
    }
    const next = structuredClone(gw.object!) as Obj;
    const nextSpec = asObject(next.spec);
    nextSpec.infrastructure = { ...asObject(nextSpec.infrastructure), parametersRef: { group: '', kind: 'ConfigMap', name: params.metadata.name } };
    next.spec = nextSpec;
    edit(gw, next);
  }
  return renderManifestStream(stream, withObjects(stream.docs, [params, ...gatewayApiManifestObjects(changes)]));
}

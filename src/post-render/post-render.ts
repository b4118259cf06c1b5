import { isDeepStrictEqual } from 'node:util';
import { applyAutoscaler, applyPodChanges, extraObjects, type K8sObject, type PodChanges } from '../pod';
import { describeObject, documentText, objectId, parseManifestStream, renderManifestStream, sameObject, type ManifestDoc } from './manifest-stream';
import { isHelmHook, selectTarget, type TargetRule } from './target';
import { syncDocument, syncDocumentAt } from './yaml-sync';
import { gatewayApiManifestObjects, gatewayParametersObject } from '../emit/gateway-api';
import { GracegateError } from '../core/errors';

/**
 * The post-renderer: the pod changes put into an already rendered stream. It decides nothing
 * itself. The Deployment is changed by `applyPodChanges` (the same function the constructs use),
 * the appended objects are `extraObjects`, and the LB Service annotations are the pod changes'
 * own. What is left to this module is finding the target, refusing inputs the changes would
 * silently not fit, and writing the stream back with everything else as it was.
 */

/** The input is a valid stream the pod changes cannot be put into; the message says what to change. */
export class PostRenderError extends GracegateError {}

export type PostRenderOptions = {
  target: TargetRule;
  /** Name of the input in messages. @default stdin */
  source?: string;
};

/** The comment put above each appended object, so a reader of `helm template` output knows its origin. */
export const APPENDED_COMMENT = 'Source: gracegate post-render';

type Obj = Record<string, unknown>;

function record(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

/** The labels of a workload's pod template. */
export function podLabelsOf(workload: Obj): Obj {
  return record(record(record(record(workload.spec).template).metadata).labels);
}

function selects(selector: Record<string, unknown>, labels: Record<string, unknown>): boolean {
  const entries = Object.entries(selector);
  return entries.length > 0 && entries.every(([k, v]) => labels[k] === v);
}

/** An HPA scaling the target: setting replicas would fight it (and its range ignores the plan). */
export function autoscalerOf(docs: ManifestDoc[], target: Obj): ManifestDoc | undefined {
  const name = record(target.metadata).name;
  return docs.find((d) => {
    const o = d.object;
    if (!o || o.kind !== 'HorizontalPodAutoscaler') return false;
    const ref = record(record(o.spec).scaleTargetRef);
    return ref.kind === target.kind && ref.name === name;
  });
}

/** Fails when the changes would not fit the rendered target: they would apply, and do nothing. */
function checkFit(docs: ManifestDoc[], target: ManifestDoc, changes: PodChanges): ManifestDoc | undefined {
  const t = target.object!;
  const where = describeObject(t);
  const namespace = record(t.metadata).namespace;
  if (typeof namespace === 'string' && namespace !== changes.gateway.namespace) {
    throw new PostRenderError(
      `${where} is in namespace '${namespace}' but the spec's metadata.namespace is '${changes.gateway.namespace}': the health Service and PDB would land apart from the pods; set metadata.namespace to '${namespace}'`,
    );
  }
  const podLabels = podLabelsOf(t);
  const missing = Object.entries(changes.selectorLabels).filter(([k, v]) => podLabels[k] !== v);
  if (missing.length > 0) {
    throw new PostRenderError(
      `${where}: its pod labels lack ${missing.map(([k, v]) => `${k}=${v}`).join(', ')}, which the health Service, PDB and anti-affinity select (gracegate derives them from metadata.name '${changes.gateway.name}'); render the chart with the release named '${changes.gateway.name}', or rename the spec`,
    );
  }
  const hpa = autoscalerOf(docs, t);
  if (hpa && !changes.autoscaler) {
    throw new PostRenderError(
      `${describeObject(hpa.object!)} scales ${where}, but the spec has a fixed spec.replicas (${changes.replicas}): describe the HPA in spec.autoscaling {minReplicas, maxReplicas} instead (gracegate then plans every count of the range and keeps the HPA), or turn the chart's autoscaling off (istio/gateway: --set autoscaling.enabled=false)`,
    );
  }
  if (!hpa && changes.autoscaler) {
    throw new PostRenderError(
      `spec.autoscaling is set, but no HorizontalPodAutoscaler in the input scales ${where}: render the chart with its autoscaling on (istio/gateway: autoscaling.enabled=true, its default), or give spec.replicas instead`,
    );
  }
  return hpa;
}

/**
 * The chart's LoadBalancer Services in front of the gateway pods (they get the NLB annotations):
 * those in the gateway's namespace only. A Service selects pods of its own namespace, so one in
 * another namespace with the same selector fronts other pods, and is not gracegate's to change.
 */
function gatewayServices(docs: ManifestDoc[], target: Obj, namespace: string, types: readonly string[] = ['LoadBalancer']): ManifestDoc[] {
  const podLabels = podLabelsOf(target);
  return docs.filter((d) => {
    const o = d.object;
    if (!o || o.kind !== 'Service' || isHelmHook(o)) return false;
    const own = record(o.metadata).namespace;
    if (own !== undefined && own !== namespace) return false;
    const spec = record(o.spec);
    return types.includes(String(spec.type)) && selects(record(spec.selector), podLabels);
  });
}

/**
 * The objects gracegate adds beside the target: the documents to append, after bringing up to date
 * any that an earlier run already left in the stream (so a second pass changes nothing).
 */
export function withObjects(docs: ManifestDoc[], extras: readonly K8sObject[]): string[] {
  const appended: string[] = [];
  for (const extra of extras) {
    const existing = docs.find((d) => d.object !== null && sameObject(objectId(d.object), objectId(extra)));
    if (!existing) appended.push(documentText(extra, APPENDED_COMMENT));
    else if (!isDeepStrictEqual(existing.object, extra)) edit(existing, extra as Obj);
  }
  return appended;
}

/**
 * Brings the entry's YAML in line with `next`; an item of a List changes in its List, which is then
 * re-serialised. A document with a `<<` merge key is refused: gracegate reads it merged, as kubectl
 * does, but writing the merged object back would silently drop the merge the author wrote.
 */
export function edit(d: ManifestDoc, next: Obj): void {
  const mergeLine = d.mergeKeyLine ?? d.inList?.list.mergeKeyLine;
  if (mergeLine !== undefined) {
    throw new PostRenderError(
      `${describeObject(d.object ?? next)} (document ${d.index}) uses a '<<' merge key (line ${mergeLine}): gracegate does not rewrite a document that holds one; write the merged keys out in the template`,
    );
  }
  if (d.inList ? syncDocumentAt(d.doc, ['items', d.inList.item], next) : syncDocument(d.doc, next)) {
    d.touched = true;
    if (d.inList) d.inList.list.touched = true;
    d.object = next;
  }
}

/**
 * Puts the pod changes into a rendered multi-document stream and returns the new stream. Running
 * it on its own output returns that output unchanged, byte for byte. Throws ManifestStreamError
 * (bad input), TargetError (no single target) or PostRenderError (target does not fit).
 */
export function postRender(text: string, changes: PodChanges, options: PostRenderOptions): string {
  if (changes.gatewayApi) return postRenderGatewayApi(text, changes, options.source ?? 'stdin');
  const stream = parseManifestStream(text, options.source ?? 'stdin');
  const target = selectTarget(stream.docs, options.target);
  const hpa = checkFit(stream.docs, target, changes);

  try {
    // With an HPA the Deployment loses its replicas and the HPA gets the plan's range.
    edit(target, applyPodChanges(target.object as K8sObject, changes) as Obj);
    if (hpa) edit(hpa, applyAutoscaler(hpa.object as K8sObject, changes) as Obj);
  } catch (err) {
    if (err instanceof GracegateError) throw err.locate(describeObject(target.object!));
    throw err;
  }

  // The traffic policy on every Service the LB can send traffic through (LoadBalancer, NodePort)
  // that selects the gateway's pods; gracegate's own health Service is appended below, already Local.
  const policy = changes.gatewayServiceTrafficPolicy;
  if (policy) {
    for (const svc of gatewayServices(stream.docs, target.object!, changes.gateway.namespace, ['LoadBalancer', 'NodePort'])) {
      const next = structuredClone(svc.object!);
      next.spec = { ...record(next.spec), externalTrafficPolicy: policy };
      edit(svc, next);
    }
  }

  const annotations = changes.gatewayServiceAnnotations;
  if (Object.keys(annotations).length > 0) {
    const services = gatewayServices(stream.docs, target.object!, changes.gateway.namespace);
    if (services.length === 0) {
      throw new PostRenderError(
        `the LB model needs annotations on the gateway's LoadBalancer Service, but no Service of type LoadBalancer in the input selects the pods of ${describeObject(target.object!)}`,
      );
    }
    for (const svc of services) {
      const next = structuredClone(svc.object!);
      const meta = record(next.metadata);
      meta.annotations = { ...record(meta.annotations), ...annotations };
      next.metadata = meta;
      edit(svc, next);
    }
  }

  return renderManifestStream(stream, withObjects(stream.docs, extraObjects(changes)));
}

/**
 * A Gateway API gateway: istiod deploys its pods, so there is no Deployment in the stream. The
 * Gateway gets the parametersRef (class defaults need none), and the parameters ConfigMap, the hc
 * ConfigMap and the health Service are appended. A Gateway that already names another ConfigMap is
 * refused: it names one, and silently replacing it would drop the user's customisations.
 */
function postRenderGatewayApi(text: string, changes: PodChanges, source: string): string {
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
        record(d.object.metadata).name === changes.gateway.name,
    );
    if (gateways.length !== 1) {
      throw new PostRenderError(
        `expected one Gateway named '${changes.gateway.name}' (the spec's metadata.name) in the input, found ${gateways.length}: gracegate points it at the parameters ConfigMap`,
      );
    }
    const gw = gateways[0]!;
    const where = describeObject(gw.object!);
    const spec = record(gw.object!.spec);
    const namespace = record(gw.object!.metadata).namespace;
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
    const ref = record(record(spec.infrastructure).parametersRef);
    if (Object.keys(ref).length > 0 && (ref.kind !== 'ConfigMap' || ref.name !== params.metadata.name)) {
      throw new PostRenderError(
        `${where} already names ${String(ref.kind)} '${String(ref.name)}' in spec.infrastructure.parametersRef, and a Gateway names one: merge yours with gracegate's (gracegate synth --parameters <that ConfigMap>) and deliver the result, or remove the reference`,
      );
    }
    const next = structuredClone(gw.object!) as Obj;
    const nextSpec = record(next.spec);
    nextSpec.infrastructure = { ...record(nextSpec.infrastructure), parametersRef: { group: '', kind: 'ConfigMap', name: params.metadata.name } };
    next.spec = nextSpec;
    edit(gw, next);
  }
  return renderManifestStream(stream, withObjects(stream.docs, [params, ...gatewayApiManifestObjects(changes)]));
}

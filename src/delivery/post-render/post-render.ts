import { applyAutoscaler, applyPodChanges, extraObjects, isHealthServiceOf, type K8sObject, type PodChanges } from '../../pod';
import { describeObject, parseManifestStream, renderManifestStream, type ManifestDoc } from '../manifest-stream';
import { edit, PostRenderError, withObjects } from '../stream-edit';
import { withHealthPort } from '../service-patch';
import { isHelmHook, selectTarget, type TargetRule } from '../target';
import { asObject, objAt } from '../../core/json';
import { GracegateError } from '../../core/errors';

/**
 * The post-renderer: the pod changes put into an already rendered stream. It decides nothing
 * itself. The Deployment is changed by `applyPodChanges` (the same function the constructs use),
 * the appended objects are `extraObjects`, and the LB Service annotations are the pod changes'
 * own. What is left to this module is finding the target, refusing inputs the changes would
 * silently not fit, and writing the stream back with everything else as it was.
 */

export type PostRenderOptions = {
  target: TargetRule;
  /** Name of the input in messages. @default stdin */
  source?: string;
};

type Obj = Record<string, unknown>;

/** The labels of a workload's pod template. */
export function podLabelsOf(workload: Obj): Obj {
  return objAt(workload, ['spec', 'template', 'metadata', 'labels']);
}

function selects(selector: Record<string, unknown>, labels: Record<string, unknown>): boolean {
  const entries = Object.entries(selector);
  return entries.length > 0 && entries.every(([k, v]) => labels[k] === v);
}

/** An HPA scaling the target: setting replicas would fight it (and its range ignores the plan). */
export function autoscalerOf(docs: ManifestDoc[], target: Obj): ManifestDoc | undefined {
  const name = asObject(target.metadata).name;
  return docs.find((d) => {
    const o = d.object;
    if (!o || o.kind !== 'HorizontalPodAutoscaler') return false;
    const ref = objAt(o, ['spec', 'scaleTargetRef']);
    return ref.kind === target.kind && ref.name === name;
  });
}

/** Fails when the changes would not fit the rendered target: they would apply, and do nothing. */
function checkFit(docs: ManifestDoc[], target: ManifestDoc, changes: PodChanges): ManifestDoc | undefined {
  const t = target.object!;
  const where = describeObject(t);
  const namespace = asObject(t.metadata).namespace;
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
function gatewayServices(docs: ManifestDoc[], target: Obj, gatewayName: string, namespace: string, types: readonly string[]): ManifestDoc[] {
  const podLabels = podLabelsOf(target);
  return docs.filter((d) => {
    const o = d.object;
    if (!o || o.kind !== 'Service' || isHelmHook(o) || isHealthServiceOf(o, gatewayName)) return false;
    const own = asObject(o.metadata).namespace;
    if (own !== undefined && own !== namespace) return false;
    const spec = asObject(o.spec);
    return types.includes(String(spec.type)) && selects(asObject(spec.selector), podLabels);
  });
}

/**
 * The gateway's own Services (LoadBalancer and NodePort: the LB can send traffic through either)
 * brought in line with the plan, each edited once: the traffic policy; the health port on them, or
 * off them where the plan has a health Service of its own; the LB's annotations on the LoadBalancer
 * ones. An earlier run's health Service goes where the port is on the gateway's Service. So a stream
 * post-rendered with another spec before comes out as the plain render would. gracegate's own
 * health Service is appended later, already Local.
 */
function editGatewayServices(docs: ManifestDoc[], target: Obj, changes: PodChanges): void {
  const policy = changes.gatewayServiceTrafficPolicy;
  const port = changes.gatewayServiceHealthPort;
  const annotations = changes.gatewayServiceAnnotations;
  const annotate = Object.keys(annotations).length > 0;
  const services = gatewayServices(docs, target, changes.gateway.name, changes.gateway.namespace, ['LoadBalancer', 'NodePort']);
  if (port && services.length === 0) {
    throw new PostRenderError(
      `the plan puts the sidecar's health port on the gateway's own Service, but no Service of type LoadBalancer or NodePort in the input selects the pods of ${describeObject(target)}`,
    );
  }
  // Each Service's one edit; they go in the order the edits once did (policy, port, annotations), so
  // a Service that cannot be edited (a '<<' merge key) is the one named as before.
  const edits: Array<{ svc: ManifestDoc; next: Obj; step: number }> = [];
  for (const svc of services) {
    const spec = asObject(svc.object!.spec);
    const ports: unknown[] = Array.isArray(spec.ports) ? spec.ports : [];
    const nextPorts = withHealthPort(ports, port);
    const movePort = Boolean(port) || nextPorts.length !== ports.length;
    const annotated = annotate && String(spec.type) === 'LoadBalancer';
    const step = policy ? 1 : movePort ? 2 : annotated ? 3 : 0;
    if (step === 0) continue;
    const next = structuredClone(svc.object!);
    if (policy) next.spec = { ...asObject(next.spec), externalTrafficPolicy: policy };
    if (movePort) next.spec = { ...asObject(next.spec), ports: nextPorts };
    if (annotated) {
      const meta = asObject(next.metadata);
      meta.annotations = { ...asObject(meta.annotations), ...annotations };
      next.metadata = meta;
    }
    edits.push({ svc, next, step });
  }
  for (const { svc, next } of edits.filter((e) => e.step < 3)) edit(svc, next);
  if (annotate && !services.some((svc) => String(asObject(svc.object!.spec).type) === 'LoadBalancer')) {
    throw new PostRenderError(
      `the LB model needs annotations on the gateway's LoadBalancer Service, but no Service of type LoadBalancer in the input selects the pods of ${describeObject(target)}`,
    );
  }
  for (const { svc, next } of edits.filter((e) => e.step === 3)) edit(svc, next);
  if (!port) return;
  for (const d of docs) {
    if (d.object && !d.inList && isHealthServiceOf(d.object, changes.gateway.name)) d.removed = true;
  }
}

/**
 * Puts the pod changes into a rendered multi-document stream and returns the new stream. Running
 * it on its own output returns that output unchanged, byte for byte. Throws ManifestStreamError
 * (bad input), TargetError (no single target) or PostRenderError (target does not fit).
 */
export function postRender(text: string, changes: PodChanges, options: PostRenderOptions): string {
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

  editGatewayServices(stream.docs, target.object!, changes);

  return renderManifestStream(stream, withObjects(stream.docs, extraObjects(changes)));
}

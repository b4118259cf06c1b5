import { ANNOTATIONS, PATHS } from '../../pod/names';
import type { LintContext, HcSidecar } from '../context';
import { at, listAt, objAt, type Obj } from '../objects';
import { portNumber, type ContainerView, type PodView } from '../pod-view';
import type { Fix, LintFindingDraft } from '../rule';
import { isObject, type Path } from '../../core/json';

/** How long the proxy is held after the pod's deletion before it gets SIGTERM. */
export type Hold =
  /** gracegate's hold: istio-proxy's preStop GET /wait-closed, released when the sequence ends. */
  | { kind: 'gracegate'; proxy: ContainerView; sidecar: HcSidecar | undefined; seconds: number | undefined }
  | { kind: 'sleep'; proxy: ContainerView; seconds: number }
  /** A hook lint cannot time (a script, another endpoint). */
  | { kind: 'unknown'; proxy: ContainerView }
  | { kind: 'none'; proxy: ContainerView };

/** The proxy's hold in a gateway pod (only the proxy's own preStop delays its SIGTERM: docs/facts.md §6). */
export function holdOf(ctx: LintContext, pod: PodView): Hold | undefined {
  const proxy = ctx.proxyOf(pod);
  if (!proxy) return undefined;
  const p = proxy.preStop;
  switch (p.kind) {
    case 'httpGet': {
      if (p.path !== PATHS.waitClosed) return { kind: 'unknown', proxy };
      const sidecar = ctx.hcSidecar(pod);
      const c = sidecar?.config;
      // The sequence: the LB buffer and the drain timeout, each waited at most once.
      return { kind: 'gracegate', proxy, sidecar, seconds: c ? c.lbBufferSeconds + c.drainTimeoutSeconds : undefined };
    }
    case 'sleep':
      return { kind: 'sleep', proxy, seconds: p.seconds };
    case 'none':
      return { kind: 'none', proxy };
    default:
      return { kind: 'unknown', proxy };
  }
}

/**
 * Seconds from the pod's deletion until the LB sends it no new connection: detection, the
 * propagation users measure after it, or a controller's deregistration where that is later.
 */
export function lbStopSeconds(
  ctx: LintContext,
  pod: PodView,
): { value: number; formula: string; numbers: NonNullable<LintFindingDraft['numbers']>; source: string } | undefined {
  const timing = ctx.lbView(pod).timing;
  if (!timing) return undefined;
  const lb = timing.behaviour;
  const src = timing.source;
  const numbers: NonNullable<LintFindingDraft['numbers']> = { lbDetectSeconds: { value: lb.detect.value, source: `${src}: ${lb.detect.formula}` } };
  let value = lb.detect.value;
  let formula = 'lbDetectSeconds';
  if (lb.propagation.value > 0) {
    numbers.propagationDelay = { value: lb.propagation.value, source: `${src}: ${lb.propagation.source}` };
    value += lb.propagation.value;
    formula += ' + propagationDelay';
  }
  if (lb.deregistrationLag && lb.deregistrationLag.value > value) {
    numbers.deregistrationLag = { value: lb.deregistrationLag.value, source: `${src}: ${lb.deregistrationLag.source}` };
    formula = `max(${formula}, deregistrationLag)`;
    value = lb.deregistrationLag.value;
  }
  return { value: Math.round(value * 1000) / 1000, formula, numbers, source: src };
}

/** The plan's gateway pod, when a plan is given: the workload named like the spec, with the proxy. */
/** The names the planned gateway's workload goes by: the spec's, and for a Gateway API gateway the Deployment istiod makes (`<gateway>-<class>`). */
export function plannedWorkloadNames(ctx: LintContext): string[] {
  const given = ctx.plan;
  if (!given) return [];
  const api = given.changes.gatewayApi;
  return api ? [api.deploymentName, given.plan.gateway.name] : [given.plan.gateway.name];
}

export function planTarget(ctx: LintContext): PodView | undefined {
  const plan = ctx.plan?.plan;
  if (!plan) return undefined;
  const names = plannedWorkloadNames(ctx);
  return ctx.gateways.find((p) => names.includes(p.owner.name) && (p.owner.namespace === undefined || p.owner.namespace === plan.gateway.namespace));
}

/**
 * A fix that rewrites the pod's `proxy.istio.io/config` annotation: its parsed value changed by
 * `change`, written back as JSON (which is YAML, what Istio reads). Undefined when the annotation
 * does not parse (istio-proxy-config-invalid reports that first).
 */
export function proxyConfigFix(ctx: LintContext, pod: PodView, description: string, change: (config: Obj) => void): Fix | undefined {
  const annotation = ctx.proxyDrain(pod).annotation;
  if (annotation && annotation.value === null) return undefined;
  const config = structuredClone(annotation?.value ?? {}) as Obj;
  change(config);
  return { description, edits: [{ object: pod.owner.id, path: [...pod.metaPath, 'annotations', ANNOTATIONS.proxyConfig], set: JSON.stringify(config) }] };
}

/** A RollingUpdate's maxSurge / maxUnavailable resolved to pods, as the Deployment controller does. */
export function rollingUpdate(
  pod: PodView,
  replicas: number,
): { maxSurge: number; maxUnavailable: number; surgeRaw: unknown; unavailableRaw: unknown; path: Path } | undefined {
  if (pod.owner.kind !== 'Deployment') return undefined;
  const strategy = objAt(pod.owner.value, ['spec', 'strategy']);
  if (strategy.type !== undefined && strategy.type !== 'RollingUpdate') return undefined;
  const ru = objAt(strategy, ['rollingUpdate']);
  const surgeRaw = ru.maxSurge ?? '25%';
  const unavailableRaw = ru.maxUnavailable ?? '25%';
  // kubernetes pkg/controller/deployment/util: surge rounds up, unavailable rounds down.
  const resolve = (v: unknown, up: boolean): number => {
    if (typeof v === 'number') return v;
    const m = typeof v === 'string' ? /^(\d+)%$/.exec(v) : null;
    if (m) return (up ? Math.ceil : Math.floor)((Number(m[1]) * replicas) / 100);
    return typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  };
  return { maxSurge: resolve(surgeRaw, true), maxUnavailable: resolve(unavailableRaw, false), surgeRaw, unavailableRaw, path: ['spec', 'strategy'] };
}

/** Whether an IntOrString is zero as the API server validates it (`0` or `0%`). */
export function isZero(v: unknown): boolean {
  return v === 0 || v === '0' || v === '0%';
}

/**
 * Why at most one of these pods runs per node: required pod anti-affinity on the hostname that
 * selects the pod itself, or a hostPort. Undefined when several may share a node.
 */
export function onePerNode(pod: PodView): { reason: string; path: Path } | undefined {
  const terms = listAt(pod.spec, ['affinity', 'podAntiAffinity', 'requiredDuringSchedulingIgnoredDuringExecution']);
  const i = terms.findIndex((t) => isObject(t) && t.topologyKey === 'kubernetes.io/hostname' && selfSelecting(at(t, ['labelSelector']), pod.labels));
  if (i >= 0)
    return {
      reason: 'required pod anti-affinity on kubernetes.io/hostname',
      path: [...pod.specPath, 'affinity', 'podAntiAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', i],
    };
  for (const c of pod.containers) {
    const ports = listAt(c.value, ['ports']);
    const j = ports.findIndex((p) => isObject(p) && typeof p.hostPort === 'number' && p.hostPort > 0);
    if (j >= 0) return { reason: `hostPort ${(ports[j] as Obj).hostPort} (one pod per node and port)`, path: [...c.path, 'ports', j, 'hostPort'] };
  }
  return undefined;
}

function selfSelecting(selector: unknown, labels: Obj): boolean {
  const match = objAt(selector, ['matchLabels']);
  const entries = Object.entries(match);
  return entries.length > 0 && entries.every(([k, v]) => labels[k] === v) && listAt(selector, ['matchExpressions']).length === 0;
}

/** The replica count lint assumes: spec.replicas, else the autoscaler's minimum, else Kubernetes' 1. */
export function replicasOf(ctx: LintContext, pod: PodView): { value: number; max: number; source: string } {
  const hpa = ctx.autoscalerOf(pod);
  const min = hpa ? Number(at(hpa.value, ['spec', 'minReplicas']) ?? 1) : undefined;
  const max = hpa ? Number(at(hpa.value, ['spec', 'maxReplicas'])) : undefined;
  if (pod.replicas !== undefined) return { value: pod.replicas, max: Math.max(pod.replicas, max ?? 0), source: `${pod.owner.id} spec.replicas` };
  if (hpa) return { value: min!, max: max ?? min!, source: `${hpa.id} minReplicas..maxReplicas` };
  return { value: 1, max: 1, source: 'Kubernetes default replicas 1' };
}

/** The port of a probe, resolved. */
export function probePort(c: ContainerView, probe: { port?: number | string }): number | undefined {
  return portNumber(c, probe.port);
}

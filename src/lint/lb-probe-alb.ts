import { isObject } from '../core/json';
import { ISTIO_STATUS_PORT } from './istio';
import { at, listAt } from './objects';
import type { ContainerView, PodView } from './pod-view';
import { probe, resolveTarget, servicePorts, type LbProbe, type LbViewSource, type ProbeVia } from './lb-probe';

/**
 * The LB's view from an AWS ALB's Ingress annotations. gracegate plans for no ALB (it has no
 * vendor folder), so what lint knows of it lives here.
 */
const ALB_PREFIX = 'alb.ingress.kubernetes.io/';

/** An ALB's health checks, from the Ingresses of class alb whose backends are Services of the pod. */
export function albProbes(ctx: LbViewSource, pod: PodView): LbProbe[] {
  const services = ctx.servicesOf(pod);
  const out: LbProbe[] = [];
  for (const ing of ctx.ofKind('Ingress')) {
    const cls = at(ing.value, ['spec', 'ingressClassName']) ?? ing.annotations['kubernetes.io/ingress.class'];
    if (cls !== 'alb') continue;
    const backends = [
      at(ing.value, ['spec', 'defaultBackend', 'service']),
      ...listAt(ing.value, ['spec', 'rules']).flatMap((r) => listAt(r, ['http', 'paths']).map((p) => at(p, ['backend', 'service']))),
    ].filter(isObject);
    for (const b of backends) {
      const svc = services.find((s) => s.name === b.name && s.sameNamespace(ing));
      if (!svc) continue;
      const sp = servicePorts(svc).find((p) => p.port === at(b, ['port', 'number']) || (p.name !== undefined && p.name === at(b, ['port', 'name'])));
      // The Service's annotations win over the Ingress's (AWS Load Balancer Controller).
      const ann = (k: string): unknown => svc.annotations[`${ALB_PREFIX}${k}`] ?? ing.annotations[`${ALB_PREFIX}${k}`];
      const targetType = ann('target-type') === 'ip' ? 'ip' : 'instance';
      const givenPath = ann('healthcheck-path');
      const protocol = String(ann('healthcheck-protocol') ?? 'HTTP').toUpperCase() === 'TCP' ? 'TCP' : 'HTTP';
      const givenPort = ann('healthcheck-port');
      const numeric = typeof givenPort === 'string' && /^\d+$/.test(givenPort) ? Number(givenPort) : undefined;
      let podPort: number | undefined;
      let container: ContainerView | undefined;
      let via: ProbeVia;
      const numbers: LbProbe['numbers'] = {};
      if (targetType === 'ip') {
        const r = numeric !== undefined ? { port: numeric, container: resolveTarget(pod, numeric)?.container } : resolveTarget(pod, sp?.targetPort);
        podPort = r?.port;
        container = r?.container;
        via = { kind: 'pod-ip', ingress: ing };
      } else {
        const byNode = numeric !== undefined ? servicePorts(svc).find((p) => p.nodePort === numeric) : sp;
        const r = resolveTarget(pod, byNode?.targetPort);
        podPort = r?.port;
        container = r?.container;
        via = { kind: 'node-port', service: svc, port: byNode ?? { index: 0 } };
        if (byNode?.nodePort !== undefined) numbers.nodePort = { value: byNode.nodePort, source: `${svc.id} spec.ports[${byNode.index}].nodePort` };
      }
      if (container === undefined && podPort === ISTIO_STATUS_PORT) container = ctx.proxyOf(pod);
      if (podPort !== undefined)
        numbers.lbProbePort = { value: podPort, source: numeric !== undefined ? `${ALB_PREFIX}healthcheck-port` : `${svc.id} targetPort (traffic-port)` };
      out.push(
        probe({
          podPort,
          container,
          path: protocol === 'HTTP' ? (typeof givenPath === 'string' ? givenPath : '/') : undefined,
          pathSource: protocol === 'TCP' ? 'TCP' : typeof givenPath === 'string' ? `${ALB_PREFIX}healthcheck-path` : "the controller's default /",
          protocol,
          via,
          source: `${ing.id}'s annotations (ALB ${targetType} targets)`,
          evidence: { object: ing, path: ['metadata', 'annotations'] },
          numbers,
        }),
      );
    }
  }
  return out;
}

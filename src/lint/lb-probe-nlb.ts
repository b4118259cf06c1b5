import type { Path } from '../core/json';
import { NLB_ANNOTATIONS, nlbBlockOf, nlbTargetTypeOf } from '../lb/nlb/annotations';
import type { LbBehaviour } from '../model/lb-behaviour';
import { ISTIO_STATUS_PORT } from './istio';
import { objAt, type LintObject } from './objects';
import type { ContainerView, PodView } from './pod-view';
import { isLocal, probe, resolveTarget, servicePorts, type LbProbe, type LbTiming, type LbViewSource, type ProbeVia } from './lb-probe';

/*
 * The LB's view from an AWS NLB's Service annotations (their names: src/lb/nlb/annotations.ts):
 * its target type, health check and timing (docs/facts.md §3).
 */

/** The NLB target type the AWS controllers give a LoadBalancer Service (docs/facts.md §3); undefined: not an NLB the annotations name. */
export function nlbTargetType(svc: LintObject, lb: LbBehaviour | undefined): 'ip' | 'instance' | undefined {
  if (objAt(svc.value, ['spec']).type !== 'LoadBalancer') return undefined;
  const named = nlbTargetTypeOf(svc.annotations);
  if (named) return named;
  return lb?.cloudTargetType;
}

/** An NLB's health check from its Service's annotations (AWS Load Balancer Controller defaults: TCP on the traffic port). */
export function nlbProbes(ctx: LbViewSource, pod: PodView, svc: LintObject): LbProbe[] {
  const target = nlbTargetType(svc, ctx.lb?.behaviour);
  if (!target) return [];
  const a = svc.annotations;
  const evidence = { object: svc, path: ['metadata', 'annotations'] as Path };
  if (target === 'instance' && isLocal(svc) && a[NLB_ANNOTATIONS.healthCheckPort] === undefined) {
    return [
      probe({
        podPort: undefined,
        container: undefined,
        path: '/healthz',
        pathSource: "kube-proxy's health check",
        protocol: 'HTTP',
        via: { kind: 'health-check-node-port', service: svc },
        source: `${svc.id}'s annotations (NLB instance targets)`,
        evidence,
        numbers: {
          nlbTargetType: { value: 'instance', source: `${svc.id} ${NLB_ANNOTATIONS.type} / nlb-target-type (or --lb)` },
          externalTrafficPolicy: { value: 'Local', source: `${svc.id} spec.externalTrafficPolicy` },
        },
      }),
    ];
  }
  const protocol = String(a[NLB_ANNOTATIONS.healthCheckProtocol] ?? 'TCP').toUpperCase() === 'TCP' ? 'TCP' : 'HTTP';
  const givenPath = a[NLB_ANNOTATIONS.healthCheckPath];
  const path =
    protocol === 'HTTP'
      ? {
          path: typeof givenPath === 'string' ? givenPath : '/',
          pathSource: typeof givenPath === 'string' ? `${NLB_ANNOTATIONS.healthCheckPath}` : "the controller's default /",
        }
      : { path: undefined, pathSource: 'TCP' };
  const givenPort = a[NLB_ANNOTATIONS.healthCheckPort];
  const numeric = typeof givenPort === 'string' && /^\d+$/.test(givenPort) ? Number(givenPort) : typeof givenPort === 'number' ? givenPort : undefined;
  const ports = servicePorts(svc);
  const out: LbProbe[] = [];
  // One target group per Service port; `traffic-port` (the default) checks each on its own port.
  const checked = numeric !== undefined ? [undefined] : ports;
  for (const sp of checked) {
    const numbers: LbProbe['numbers'] = {};
    let podPort: number | undefined;
    let container: ContainerView | undefined;
    let via: ProbeVia;
    if (target === 'ip') {
      const r = numeric !== undefined ? { port: numeric, container: resolveTarget(pod, numeric)?.container } : resolveTarget(pod, sp!.targetPort);
      podPort = r?.port;
      container = r?.container ?? (podPort === ISTIO_STATUS_PORT ? ctx.proxyOf(pod) : undefined);
      via = { kind: 'pod-ip', service: svc };
    } else {
      // Instance targets: the node's port, a node port of one of the Service's ports.
      const byNode = numeric !== undefined ? ports.find((p) => p.nodePort === numeric) : sp!;
      const r = byNode ? resolveTarget(pod, byNode.targetPort) : undefined;
      podPort = r?.port;
      container = r?.container ?? (podPort === ISTIO_STATUS_PORT ? ctx.proxyOf(pod) : undefined);
      via = { kind: 'node-port', service: svc, port: byNode ?? { index: 0, ...(numeric !== undefined ? { nodePort: numeric } : {}) } };
      if (byNode?.nodePort !== undefined) numbers.nodePort = { value: byNode.nodePort, source: `${svc.id} spec.ports[${byNode.index}].nodePort` };
    }
    if (podPort !== undefined)
      numbers.lbProbePort = {
        value: podPort,
        source:
          numeric !== undefined ? `${svc.id} annotation ${NLB_ANNOTATIONS.healthCheckPort}` : `${svc.id} spec.ports[${sp!.index}].targetPort (traffic-port)`,
      };
    out.push(probe({ podPort, container, ...path, protocol, via, source: `${svc.id}'s annotations (NLB ${target} targets)`, evidence, numbers }));
  }
  return out;
}

/**
 * An NLB's detection timing from the annotations of the Service in front of the pod, read by the
 * nlb vendor as a spec's loadBalancer block would be (its defaults for what they leave out).
 */
export function nlbTiming(ctx: LbViewSource, pod: PodView): LbTiming | undefined {
  for (const svc of ctx.servicesOf(pod)) {
    const target = nlbTargetType(svc, undefined);
    if (!target) continue;
    const block = nlbBlockOf(svc.annotations, target);
    // The vendors are loaded only when an NLB is in the input (lint's rules alone start faster).
    const { lbBehaviour, loadBalancerSchema } = require('../lb/registry') as typeof import('../lb/registry');
    const parsed = loadBalancerSchema.safeParse(block);
    if (!parsed.success) continue;
    const given = new Set(Object.keys(block).map((k) => `spec.loadBalancer.${k}`));
    return { behaviour: lbBehaviour(parsed.data, given), source: `${svc.id}'s annotations (NLB ${target} targets)` };
  }
  return undefined;
}

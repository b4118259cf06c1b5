import { isObject, type Path } from '../core/json';
import type { LbBehaviour } from '../model/lb-behaviour';
import { listAt, objAt, type LintObject } from './objects';
import type { HcSidecar, LbProbeFlag, LintOptions } from './lint-options';
import type { ContainerView, PodView } from './pod-view';
import type { ProxyHealth } from './proxy-health';

/**
 * What every part of the LB's view shares (src/lint/lb-view.ts puts the parts together): the probe
 * as lint states it, the Service ports it reads, and the pod's port a target names.
 */

/** What the LB's view reads of the lint context (context.ts's LintContext is one). */
export interface LbViewSource {
  readonly gateways: PodView[];
  readonly lb: LintOptions['lb'];
  ofKind(kind: string): LintObject[];
  proxyOf(pod: PodView): ContainerView | undefined;
  servicesOf(pod: PodView): LintObject[];
  hcSidecar(pod: PodView): HcSidecar | undefined;
}

/** A Service port as lint reads it. */
type ServicePort = { index: number; name?: string; port?: number; targetPort?: number | string; nodePort?: number };

export function servicePorts(svc: LintObject): ServicePort[] {
  return listAt(svc.value, ['spec', 'ports']).flatMap((p, index) =>
    isObject(p)
      ? [
          {
            index,
            ...(typeof p.name === 'string' ? { name: p.name } : {}),
            ...(typeof p.port === 'number' ? { port: p.port } : {}),
            ...(typeof p.targetPort === 'number' || typeof p.targetPort === 'string'
              ? { targetPort: p.targetPort }
              : typeof p.port === 'number'
                ? { targetPort: p.port }
                : {}),
            ...(typeof p.nodePort === 'number' ? { nodePort: p.nodePort } : {}),
          },
        ]
      : [],
  );
}

/** An LB outside the cluster reaches a Service of these types. */
export function isExternal(svc: LintObject): boolean {
  const type = objAt(svc.value, ['spec']).type;
  return type === 'NodePort' || type === 'LoadBalancer';
}

export function isLocal(svc: LintObject): boolean {
  return objAt(svc.value, ['spec']).externalTrafficPolicy === 'Local';
}

/** How the LB's probe gets to the pod. */
export type ProbeVia =
  /** Through a Service port on every node (NodePort, or a LoadBalancer addressing nodes): kube-proxy picks the pod. */
  | { kind: 'node-port'; service: LintObject; port: ServicePort }
  /** Straight to the pod's IP: cloud LB ip targets, or an LB on the pod network. */
  | { kind: 'pod-ip'; service?: LintObject; ingress?: LintObject }
  | { kind: 'host-port'; container: ContainerView; hostPort: number }
  /** NLB instance targets with externalTrafficPolicy Local: kube-proxy's healthCheckNodePort answers, never the pod. */
  | { kind: 'health-check-node-port'; service: LintObject };

export type LbProbe = {
  /** The pod's port the probe lands on (undefined where it never reaches the pod). */
  podPort: number | undefined;
  /** The container serving that port, where one declares it (or the proxy, for Istio's status port). */
  container: ContainerView | undefined;
  /** The HTTP path the LB asks for, where known; undefined for a TCP check or an unknown path. */
  path: string | undefined;
  /** Why lint takes that path (or why it does not know it). */
  pathSource: string;
  protocol: 'HTTP' | 'TCP';
  via: ProbeVia;
  /** What lint inferred it from, in words. */
  source: string;
  /** The field of the input that shows the LB's way in. */
  evidence: { object: LintObject; path: Path };
  /** One sentence: "the LB probes 18180 (GET /health_check.html) through Service/edge/x NodePort 30180". */
  statement: string;
  /** The numbers behind the statement, each with where it was read. */
  numbers: Record<string, { value: number | string; source: string }>;
  /** Where the proxy serves the endpoint itself: which case made lint take its port as the LB's. */
  proxyHealth?: ProxyHealth;
};

/** The LB's detection timing, where the input or the flags say it (NLB annotations, --lb, --spec). */
export type LbTiming = { behaviour: LbBehaviour; source: string };

export type LbView = { probes: LbProbe[]; timing: LbTiming | undefined };

export type { LbProbeFlag };

function viaText(via: ProbeVia): string {
  switch (via.kind) {
    case 'node-port': {
      const type = String(objAt(via.service.value, ['spec']).type);
      const name = via.port.name ?? String(via.port.port ?? via.port.index);
      return via.port.nodePort !== undefined
        ? `through ${via.service.id} ${type === 'NodePort' ? 'NodePort' : `(${type}) node port`} ${via.port.nodePort}`
        : `through ${via.service.id} (${type}) port ${name}${via.port.port !== undefined && via.port.name ? ` ${via.port.port}` : ''} on a node port Kubernetes assigns`;
    }
    case 'pod-ip':
      return via.ingress
        ? `at the pod's IP (ALB ip targets of ${via.ingress.id})`
        : via.service
          ? `at the pod's IP (NLB ip targets of ${via.service.id})`
          : "at the pod's IP";
    case 'host-port':
      return `through hostPort ${via.hostPort} of container ${via.container.name}`;
    case 'health-check-node-port':
      return `on kube-proxy's healthCheckNodePort of ${via.service.id} (NLB instance targets, externalTrafficPolicy Local), which answers from pod readiness`;
  }
}

function statementOf(p: Omit<LbProbe, 'statement'>): string {
  const what = p.podPort !== undefined ? `${p.podPort}` : 'the node';
  const check = p.protocol === 'TCP' ? ' (a TCP connect)' : p.path !== undefined ? ` (GET ${p.path}: ${p.pathSource})` : ` (path unknown: ${p.pathSource})`;
  const served = p.proxyHealth && p.container ? `; ${p.container.name} serves it itself (${p.proxyHealth.why})` : '';
  return `the LB probes ${what}${check} ${viaText(p.via)}${served}`;
}

export function probe(p: Omit<LbProbe, 'statement'>): LbProbe {
  return { ...p, statement: statementOf(p) };
}

/** A Service's target port resolved in the pod: the port number and the container that declares it. */
export function resolveTarget(pod: PodView, target: number | string | undefined): { port: number; container: ContainerView | undefined } | undefined {
  if (target === undefined) return undefined;
  if (typeof target === 'number' || /^\d+$/.test(target)) {
    const port = Number(target);
    return { port, container: pod.containers.find((c) => Object.values(c.portsByName).includes(port) || declares(c, port)) };
  }
  for (const c of pod.containers) if (c.portsByName[target] !== undefined) return { port: c.portsByName[target]!, container: c };
  return undefined;
}

function declares(c: ContainerView, port: number): boolean {
  return listAt(c.value, ['ports']).some((p) => isObject(p) && p.containerPort === port);
}

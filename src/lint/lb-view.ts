import { PATHS } from '../contract/hc';
import { isObject, type Path } from '../core/json';
import { NLB_ANNOTATIONS, nlbBlockOf, nlbTargetTypeOf } from '../lb/nlb/annotations';
import type { LbBehaviour } from '../model/lb-behaviour';
import { HC_HEALTH_PORT_NAME } from '../pod/names';
import { ISTIO_READY_PATH, ISTIO_STATUS_PORT } from './istio';
import { at, listAt, objAt, type LintObject } from './objects';
import type { HcSidecar, LbProbeFlag, LintOptions } from './lint-options';
import type { ContainerView, PodView } from './pod-view';
import { proxyHealthOf, type ProxyHealth } from './proxy-health';

/** What the LB's view reads of the lint context (context.ts's LintContext is one). */
export interface LbViewSource {
  readonly gateways: PodView[];
  readonly lb: LintOptions['lb'];
  ofKind(kind: string): LintObject[];
  proxyOf(pod: PodView): ContainerView | undefined;
  servicesOf(pod: PodView): LintObject[];
  hcSidecar(pod: PodView): HcSidecar | undefined;
}

/**
 * The LB's view of a pod, inferred from the manifests alone: which port and path of the pod the
 * load balancer probes, and through what (a NodePort or LoadBalancer Service, a hostPort, a cloud
 * LB's annotations, or `--lb MODEL,path=…,port=N`). Every LB-side rule reads this, so a pod is
 * judged the same way with or without gracegate's sidecar and with or without --spec; each
 * finding states the inference ("the LB probes 18180 through Service/edge/x NodePort 30180").
 *
 * In order, the first that says anything wins:
 * 1. `--lb …,port=N,path=/p`: the user's word (N is matched against node ports, hostPorts, the
 *    pod's ports and a LoadBalancer's ports; a port no Service shows is taken as the pod's own).
 * 2. a cloud LB's health check from its annotations: AWS NLB on the Service
 *    (`service.beta.kubernetes.io/aws-load-balancer-healthcheck-*`, the target type), ALB on an
 *    Ingress of class alb and its backend Service (`alb.ingress.kubernetes.io/healthcheck-*`).
 * 3. an entrance from outside (a NodePort/LoadBalancer Service port or a hostPort) onto a health
 *    endpoint: gracegate's sidecar (its LB path), or a hand-made health container (a container
 *    other than the proxy serving the port the Service targets: the W6 design), or a health
 *    endpoint the proxy serves itself (a port of the proxy other than the gateway Service's
 *    traffic ports, or named like a health port, or named by `--lb …,port=`: src/lint/proxy-health.ts),
 *    or, where the pod exposes nothing else, Istio's status port 15021 (`/healthz/ready`, which the
 *    istio/gateway chart's Service carries for LB health checks).
 * 4. gracegate's sidecar with no entrance: the LB probes its LB path at the pod's IP (an in-mesh
 *    LB, or one on the pod network).
 */

/** A Service port as lint reads it. */
export type ServicePort = { index: number; name?: string; port?: number; targetPort?: number | string; nodePort?: number };

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

const ALB_PREFIX = 'alb.ingress.kubernetes.io/';

/** The health endpoints of a W6-style hand-made health container: the design's three paths, which gracegate's sidecar kept. */
const W6_PATHS = new Set<string>([PATHS.lb, PATHS.readiness, PATHS.liveness]);

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

function probe(p: Omit<LbProbe, 'statement'>): LbProbe {
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

/** What a port of the pod is, to the LB: gracegate's LB endpoint, a health container's, Istio's status port, or traffic. */
type PortRole =
  | { role: 'gracegate'; container: ContainerView }
  | { role: 'health-container'; container: ContainerView }
  | { role: 'istio-status'; container: ContainerView | undefined }
  | { role: 'proxy-health'; container: ContainerView; health: ProxyHealth }
  | { role: 'traffic' };

/** The entrance a port is reached through, for telling the proxy's health port from its traffic ports. */
type Reached = { service?: LintObject; servicePortName?: string; flag?: string };

function roleOf(ctx: LbViewSource, pod: PodView, port: number, container: ContainerView | undefined, targetName?: string, reached: Reached = {}): PortRole {
  const sidecar = ctx.hcSidecar(pod);
  const proxy = ctx.proxyOf(pod);
  if (
    sidecar &&
    container === sidecar.container &&
    (targetName === HC_HEALTH_PORT_NAME || port === healthPortOf(sidecar.container, sidecar.config?.healthPort))
  )
    return { role: 'gracegate', container: sidecar.container };
  if (proxy && port === ISTIO_STATUS_PORT && (container === undefined || container === proxy)) return { role: 'istio-status', container: proxy };
  if (container && container !== proxy && !(sidecar && container === sidecar.container)) return { role: 'health-container', container };
  if (proxy && container === proxy) {
    const health = proxyHealthOf(pod, proxy, port, {
      services: ctx.servicesOf(pod),
      envoyFilters: ctx.ofKind('EnvoyFilter'),
      ...reached,
    });
    if (health) return { role: 'proxy-health', container: proxy, health };
  }
  return { role: 'traffic' };
}

function healthPortOf(c: ContainerView, configured: number | undefined): number | undefined {
  return configured ?? c.portsByName[HC_HEALTH_PORT_NAME];
}

/** The path lint takes for a role, and why. */
function pathFor(role: PortRole): { path: string | undefined; pathSource: string } {
  switch (role.role) {
    case 'gracegate':
      return { path: PATHS.lb, pathSource: "gracegate's LB endpoint" };
    case 'istio-status':
      return { path: ISTIO_READY_PATH, pathSource: "Istio's status port, which the istio/gateway chart's Service carries for LB health checks" };
    case 'health-container': {
      const probed = [role.container.readiness?.httpPath, role.container.liveness?.httpPath].filter((p): p is string => p !== undefined);
      // A health container answering the W6 design's endpoints serves the LB on the design's LB path.
      if (probed.length > 0 && probed.every((p) => W6_PATHS.has(p)))
        return {
          path: PATHS.lb,
          pathSource: `the W6 design's LB endpoint, as ${role.container.name} answers the design's ${[...new Set(probed)].join(' and ')}; name another with --lb MODEL,path=…`,
        };
      return { path: undefined, pathSource: `${role.container.name}'s LB path is not in the manifests: name it with --lb MODEL,path=…` };
    }
    case 'proxy-health':
      return { path: role.health.path, pathSource: role.health.pathSource };
    case 'traffic':
      return { path: undefined, pathSource: 'a traffic port' };
  }
}

/** Every way in from outside the cluster: Service ports on the nodes and hostPorts. */
type Entrance = { via: ProbeVia; target: number | string | undefined; evidence: { object: LintObject; path: Path }; numbers: LbProbe['numbers'] };

function entrances(ctx: LbViewSource, pod: PodView): Entrance[] {
  const out: Entrance[] = [];
  for (const svc of ctx.servicesOf(pod).filter(isExternal)) {
    for (const port of servicePorts(svc)) {
      const numbers: LbProbe['numbers'] = {};
      if (port.nodePort !== undefined) numbers.nodePort = { value: port.nodePort, source: `${svc.id} spec.ports[${port.index}].nodePort` };
      out.push({
        via: { kind: 'node-port', service: svc, port },
        target: port.targetPort,
        evidence: { object: svc, path: ['spec', 'ports', port.index] },
        numbers,
      });
    }
  }
  for (const c of pod.containers) {
    listAt(c.value, ['ports']).forEach((p, j) => {
      if (isObject(p) && typeof p.hostPort === 'number' && p.hostPort > 0 && typeof p.containerPort === 'number')
        out.push({
          via: { kind: 'host-port', container: c, hostPort: p.hostPort },
          target: p.containerPort,
          evidence: { object: pod.owner, path: [...c.path, 'ports', j, 'hostPort'] },
          numbers: { hostPort: { value: p.hostPort, source: `${pod.owner.id} container ${c.name} ports[${j}].hostPort` } },
        });
    });
  }
  return out;
}

function reachedBy(e: Entrance): Reached {
  return e.via.kind === 'node-port' ? { service: e.via.service, ...(e.via.port.name !== undefined ? { servicePortName: e.via.port.name } : {}) } : {};
}

function fromEntrance(pod: PodView, e: Entrance, role: PortRole, port: number, path: { path: string | undefined; pathSource: string }): LbProbe {
  const container = role.role === 'traffic' ? undefined : role.container;
  return probe({
    ...(role.role === 'proxy-health' ? { proxyHealth: role.health } : {}),
    podPort: port,
    container,
    ...path,
    protocol: 'HTTP',
    via: e.via,
    source:
      e.via.kind === 'node-port'
        ? `${e.via.service.id} port ${e.via.port.name ?? e.via.port.port ?? e.via.port.index} (targetPort ${String(e.via.port.targetPort)})`
        : `${pod.owner.id} hostPort`,
    evidence: e.evidence,
    numbers: { lbProbePort: { value: port, source: targetSource(pod, e) }, ...e.numbers },
  });
}

function targetSource(pod: PodView, e: Entrance): string {
  if (e.via.kind === 'node-port') return `${e.via.service.id} spec.ports[${e.via.port.index}].targetPort ${e.via.port.targetPort}`;
  if (e.via.kind === 'host-port') return `${pod.owner.id} container ${e.via.container.name} containerPort`;
  return 'the input';
}

/** The NLB target type the AWS controllers give a LoadBalancer Service (docs/facts.md §3); undefined: not an NLB the annotations name. */
export function nlbTargetType(svc: LintObject, lb: LbBehaviour | undefined): 'ip' | 'instance' | undefined {
  if (objAt(svc.value, ['spec']).type !== 'LoadBalancer') return undefined;
  const named = nlbTargetTypeOf(svc.annotations);
  if (named) return named;
  if (lb?.model === 'nlb') return lb.probeReachesSidecar ? 'ip' : 'instance';
  return undefined;
}

/** An NLB's health check from its Service's annotations (AWS Load Balancer Controller defaults: TCP on the traffic port). */
function nlbProbes(ctx: LbViewSource, pod: PodView, svc: LintObject): LbProbe[] {
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

/** An ALB's health checks, from the Ingresses of class alb whose backends are Services of the pod. */
function albProbes(ctx: LbViewSource, pod: PodView): LbProbe[] {
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

/** `--lb …,port=N,path=/p` on a gateway: the entrance N names, or the pod's own port N. */
function flagProbes(ctx: LbViewSource, pod: PodView, flag: LbProbeFlag, inferred: LbProbe[]): LbProbe[] {
  const source = ctx.lb!.source;
  if (flag.port === undefined) {
    // A path alone: the inferred probes, asking that path.
    return inferred.map((p) => probe({ ...p, path: flag.path, pathSource: source, protocol: 'HTTP' }));
  }
  const n = flag.port;
  const all = entrances(ctx, pod);
  const e =
    all.find((x) => x.via.kind === 'node-port' && x.via.port.nodePort === n) ??
    all.find((x) => x.via.kind === 'host-port' && x.via.hostPort === n) ??
    all.find((x) => resolveTarget(pod, x.target)?.port === n) ??
    all.find((x) => x.via.kind === 'node-port' && objAt(x.via.service.value, ['spec']).type === 'LoadBalancer' && x.via.port.port === n);
  const path = flag.path !== undefined ? { path: flag.path, pathSource: source } : undefined;
  if (e) {
    const r = resolveTarget(pod, e.target);
    if (r) {
      const role = roleOf(ctx, pod, r.port, r.container, typeof e.target === 'string' ? e.target : undefined, { ...reachedBy(e), flag: source });
      const p = fromEntrance(pod, e, role, r.port, path ?? pathFor(role));
      return [probe({ ...p, source: `${source}, ${p.source}` })];
    }
  }
  const r = resolveTarget(pod, n);
  const role = roleOf(ctx, pod, n, r?.container, undefined, { flag: source });
  return [
    probe({
      ...(role.role === 'proxy-health' ? { proxyHealth: role.health } : {}),
      podPort: n,
      container: role.role === 'traffic' ? undefined : role.container,
      ...(path ?? pathFor(role)),
      protocol: 'HTTP',
      via: { kind: 'pod-ip' },
      source: `${source} (no Service or hostPort of the input shows port ${n}: taken as the pod's own)`,
      evidence: { object: pod.owner, path: [...pod.specPath, 'containers'] },
      numbers: { lbProbePort: { value: n, source } },
    }),
  ];
}

/** The LB's view of one pod. */
export function lbViewOf(ctx: LbViewSource, pod: PodView): LbView {
  const clouds = [...ctx.servicesOf(pod).flatMap((svc) => nlbProbes(ctx, pod, svc)), ...albProbes(ctx, pod)];
  let probes = clouds;
  if (probes.length === 0) {
    const health: LbProbe[] = [];
    const status: LbProbe[] = [];
    for (const e of entrances(ctx, pod)) {
      const r = resolveTarget(pod, e.target);
      if (!r) continue;
      const role = roleOf(ctx, pod, r.port, r.container, typeof e.target === 'string' ? e.target : undefined, reachedBy(e));
      if (role.role === 'traffic') continue;
      const p = fromEntrance(pod, e, role, r.port, pathFor(role));
      (role.role === 'istio-status' ? status : health).push(p);
    }
    probes = health.length > 0 ? health : status;
    const sidecar = ctx.hcSidecar(pod);
    if (sidecar && !probes.some((p) => p.container === sidecar.container)) {
      const port = healthPortOf(sidecar.container, sidecar.config?.healthPort);
      probes = [
        probe({
          podPort: port,
          container: sidecar.container,
          path: PATHS.lb,
          pathSource: "gracegate's LB endpoint",
          protocol: 'HTTP',
          via: { kind: 'pod-ip' },
          source: "gracegate's sidecar, which no NodePort, LoadBalancer or hostPort exposes (an LB on the pod network)",
          evidence: { object: pod.owner, path: sidecar.container.path },
          numbers: port !== undefined ? { lbProbePort: { value: port, source: `${pod.owner.id} container ${sidecar.container.name} health port` } } : {},
        }),
      ];
    }
  }
  const flag = ctx.lb?.probe;
  if (flag && ctx.gateways.includes(pod)) probes = flagProbes(ctx, pod, flag, probes);
  return { probes, timing: ctx.lb ? { behaviour: ctx.lb.behaviour, source: ctx.lb.source } : nlbTiming(ctx, pod) };
}

/**
 * An NLB's detection timing from the annotations of the Service in front of the pod, read by the
 * nlb vendor as a spec's loadBalancer block would be (its defaults for what they leave out).
 */
function nlbTiming(ctx: LbViewSource, pod: PodView): LbTiming | undefined {
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

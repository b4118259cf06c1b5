import { PATHS } from '../contract/hc';
import { isObject, type Path } from '../core/json';
import { HC_HEALTH_PORT_NAME } from '../pod/names';
import { ISTIO_STATUS_PORT, ISTIO_READY_PATH } from './istio';
import { listAt, type LintObject } from './objects';
import type { ContainerView, PodView } from './pod-view';
import { proxyHealthOf, type ProxyHealth } from './proxy-health';
import { isExternal, probe, resolveTarget, servicePorts, type LbProbe, type LbViewSource, type ProbeVia } from './lb-probe';

/**
 * The LB's probe inferred from the pod's ways in (docs/lint.md): an entrance from outside (a
 * NodePort or LoadBalancer Service port, a hostPort) onto a health endpoint, or gracegate's
 * sidecar at the pod's IP where nothing exposes it.
 */

/** The health endpoints of a W6-style hand-made health container: the design's three paths, which gracegate's sidecar kept. */
const W6_PATHS = new Set<string>([PATHS.lb, PATHS.readiness, PATHS.liveness]);

/** What a port of the pod is, to the LB: gracegate's LB endpoint, a health container's, Istio's status port, or traffic. */
type PortRole =
  | { role: 'gracegate'; container: ContainerView }
  | { role: 'health-container'; container: ContainerView }
  | { role: 'istio-status'; container: ContainerView | undefined }
  | { role: 'proxy-health'; container: ContainerView; health: ProxyHealth }
  | { role: 'traffic' };

/** The entrance a port is reached through, for telling the proxy's health port from its traffic ports. */
export type Reached = { service?: LintObject; servicePortName?: string; flag?: string };

export function roleOf(
  ctx: LbViewSource,
  pod: PodView,
  port: number,
  container: ContainerView | undefined,
  targetName?: string,
  reached: Reached = {},
): PortRole {
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
export function pathFor(role: PortRole): { path: string | undefined; pathSource: string } {
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

export function entrances(ctx: LbViewSource, pod: PodView): Entrance[] {
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

export function reachedBy(e: Entrance): Reached {
  return e.via.kind === 'node-port' ? { service: e.via.service, ...(e.via.port.name !== undefined ? { servicePortName: e.via.port.name } : {}) } : {};
}

export function fromEntrance(pod: PodView, e: Entrance, role: PortRole, port: number, path: { path: string | undefined; pathSource: string }): LbProbe {
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

/** Steps 3 and 4 of the LB's view (src/lint/lb-view.ts): an entrance onto a health endpoint, or gracegate's sidecar at the pod's IP. */
export function inferredProbes(ctx: LbViewSource, pod: PodView): LbProbe[] {
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
  let probes = health.length > 0 ? health : status;
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
  return probes;
}

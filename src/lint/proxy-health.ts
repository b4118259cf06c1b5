import { isObject } from '../core/json';
import { ISTIO_STATUS_PORT } from './istio';
import { at, listAt, objAt, selectorMatches, type LintObject } from './objects';
import type { ContainerView, PodView } from './pod-view';

/**
 * A health endpoint the proxy serves itself: a port of the proxy container that an external
 * Service targets, other than Istio's status port. Many hand-built gateways answer the LB from an
 * Envoy listener of their own with the `envoy.filters.http.health_check` filter (an EnvoyFilter),
 * declared as a port of istio-proxy and exposed by a NodePort Service. lint takes such a port as
 * the LB's health endpoint in three cases, and the LB's view says which:
 * - `lb-flag`: `--lb …,port=N` names it;
 * - `health-name`: its name (the container's port or the Service's) reads like a health port;
 * - `own-port`: it is not one of the traffic ports the gateway Service carries (the Service that
 *   targets the most proxy ports, an http/https port 80 or 443 winning a tie).
 * Any other proxy port an external Service targets is traffic.
 */

export type ProxyHealthCase = 'lb-flag' | 'health-name' | 'own-port';

export type ProxyHealth = {
  case: ProxyHealthCase;
  /** Why the port is taken as a health endpoint, in words ("a port other than the traffic ports 8080, 8443 of Service/edge/gw"). */
  why: string;
  /** The path its health_check filter answers, from an EnvoyFilter of the input; undefined where none says. */
  path: string | undefined;
  pathSource: string;
};

/** Port names that read like a health endpoint's. */
const HEALTH_NAME = /(health|ready|readiness|live|liveness|probe|(^|[-_])(hc|lb-?check|check)([-_]|$))/i;

const HEALTH_CHECK_FILTER = 'envoy.filters.http.health_check';

/** A port of the proxy a Service port targets (its number resolved in the proxy container). */
function proxyTarget(proxy: ContainerView, target: unknown): number | undefined {
  if (typeof target === 'number') return declared(proxy, target) ? target : undefined;
  if (typeof target === 'string' && /^\d+$/.test(target)) return declared(proxy, Number(target)) ? Number(target) : undefined;
  return typeof target === 'string' ? proxy.portsByName[target] : undefined;
}

function declared(c: ContainerView, port: number): boolean {
  return listAt(c.value, ['ports']).some((p) => isObject(p) && p.containerPort === port);
}

/** The proxy ports a Service targets, and whether it carries an http(s) port 80 or 443. */
function proxyPortsOf(svc: LintObject, proxy: ContainerView): { ports: Set<number>; web: boolean } {
  const ports = new Set<number>();
  let web = false;
  for (const p of listAt(svc.value, ['spec', 'ports'])) {
    if (!isObject(p)) continue;
    const n = proxyTarget(proxy, p.targetPort ?? p.port);
    if (n === undefined || n === ISTIO_STATUS_PORT) continue;
    ports.add(n);
    if (p.port === 80 || p.port === 443) web = true;
  }
  return { ports, web };
}

/** The gateway Service of a pod: the Service that targets the most proxy ports, and those ports (its traffic ports). */
export function gatewayService(services: readonly LintObject[], proxy: ContainerView): { service: LintObject; ports: Set<number> } | undefined {
  let best: { service: LintObject; ports: Set<number>; web: boolean } | undefined;
  for (const service of services) {
    const { ports, web } = proxyPortsOf(service, proxy);
    if (ports.size === 0) continue;
    if (!best || ports.size > best.ports.size || (ports.size === best.ports.size && web && !best.web)) best = { service, ports, web };
  }
  return best && { service: best.service, ports: best.ports };
}

/** The name a port goes by: the container's name for it, or the Service's. */
function healthNamed(proxy: ContainerView, port: number, servicePortName: string | undefined): string | undefined {
  const own = Object.entries(proxy.portsByName).find(([, n]) => n === port)?.[0];
  for (const name of [own, servicePortName]) if (name !== undefined && HEALTH_NAME.test(name)) return name;
  return undefined;
}

/** The path the health_check filter of an EnvoyFilter of the input answers on a listener at `port` of the pod, and which one. */
export function healthCheckFilterPath(envoyFilters: readonly LintObject[], pod: PodView, port: number): { path: string; source: string } | undefined {
  for (const ef of envoyFilters) {
    if (!ef.sameNamespace(pod.owner) && ef.namespace !== 'istio-system') continue;
    const selector = objAt(ef.value, ['spec', 'workloadSelector', 'labels']);
    if (Object.keys(selector).length > 0 && !selectorMatches(selector, pod.labels, { plain: true })) continue;
    for (const [i, patch] of listAt(ef.value, ['spec', 'configPatches']).entries()) {
      const listener = objAt(patch, ['match', 'listener']);
      const value = at(patch, ['patch', 'value']);
      const onPort = listener.portNumber === port || at(value, ['address', 'socket_address', 'port_value']) === port;
      if (!onPort) continue;
      const path = filterPath(value);
      if (path !== undefined) return { path, source: `the ${HEALTH_CHECK_FILTER} filter of ${ef.id} spec.configPatches[${i}] on port ${port}` };
    }
  }
  return undefined;
}

/** The `:path` header a health_check filter's config matches, wherever in the patch it sits. */
function filterPath(v: unknown, depth = 0): string | undefined {
  if (depth > 30) return undefined;
  if (Array.isArray(v)) {
    for (const x of v) {
      const p = filterPath(x, depth + 1);
      if (p !== undefined) return p;
    }
    return undefined;
  }
  if (!isObject(v)) return undefined;
  if (v.name === HEALTH_CHECK_FILTER) {
    for (const h of listAt(v, ['typed_config', 'headers'])) {
      if (!isObject(h) || h.name !== ':path') continue;
      const m = objAt(h, ['string_match']);
      const exact = m.exact ?? h.exact_match ?? m.prefix ?? h.prefix_match;
      if (typeof exact === 'string') return exact;
    }
    return undefined;
  }
  for (const x of Object.values(v)) {
    const p = filterPath(x, depth + 1);
    if (p !== undefined) return p;
  }
  return undefined;
}

/**
 * Whether a port of the proxy that an entrance reaches (through `service`'s port `servicePortName`,
 * or named by `--lb …,port=`) is a health endpoint the proxy serves itself, and which case it is.
 */
export function proxyHealthOf(
  pod: PodView,
  proxy: ContainerView,
  port: number,
  from: { services: readonly LintObject[]; envoyFilters: readonly LintObject[]; service?: LintObject; servicePortName?: string; flag?: string },
): ProxyHealth | undefined {
  if (port === ISTIO_STATUS_PORT) return undefined;
  let found: Omit<ProxyHealth, 'path' | 'pathSource'> | undefined;
  const named = healthNamed(proxy, port, from.servicePortName);
  if (from.flag !== undefined) found = { case: 'lb-flag', why: `${from.flag} names port ${port}, a port of ${proxy.name}` };
  else if (named !== undefined) found = { case: 'health-name', why: `port ${port} of ${proxy.name} is named '${named}', like a health port` };
  else {
    const gw = gatewayService(from.services, proxy);
    if (gw && from.service && gw.service !== from.service && !gw.ports.has(port))
      found = {
        case: 'own-port',
        why: `${from.service.id} targets port ${port} of ${proxy.name}, not one of the traffic ports ${[...gw.ports].sort((a, b) => a - b).join(', ')} that ${gw.service.id} carries`,
      };
  }
  if (!found) return undefined;
  const filter = healthCheckFilterPath(from.envoyFilters, pod, port);
  return {
    ...found,
    path: filter?.path,
    pathSource: filter ? filter.source : `no EnvoyFilter of the input puts ${HEALTH_CHECK_FILTER} on port ${port}: name the LB's path with --lb MODEL,path=…`,
  };
}

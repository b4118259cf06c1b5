/**
 * The Envoy statistics gracegate names, in one place: the gauges the sidecar counts in flight from
 * (src/hc/envoy-stats.ts), which the pod changes ask Istio's stats matcher to keep and lint checks a
 * pod keeps, and the counters the termination-loss alert reads. Istio's default stats matcher drops
 * every one of them (it keeps only a few prefixes and suffixes: istio/istio pkg/bootstrap/config.go).
 */

/** An HTTP connection manager's active requests (`http.<prefix>.downstream_rq_active`): what the sidecar counts in flight by (docs/envoy.md). */
export const REQUESTS_ACTIVE = 'downstream_rq_active';

/** Active connections of a listener (`listener.<address>.downstream_cx_active`) or an HTTP connection manager. */
export const CONNECTIONS_ACTIVE = 'downstream_cx_active';

/** An HTTP connection manager's upgraded (WebSocket) connections, among its active requests. */
export const UPGRADES_ACTIVE = 'downstream_cx_upgrades_active';

/**
 * Envoy stats the termination-loss alert reads, which Istio's default stats matcher drops (it keeps
 * only a few prefixes and suffixes: istio/istio pkg/bootstrap/config.go, docs/observability.md):
 * the gateway's 5xx responses and the connections its clients (the LB) closed with a request still
 * active, per HTTP connection manager. Two counters per listener.
 */
export const LOSS_STATS_SUFFIXES = ['downstream_rq_5xx', 'downstream_cx_destroy_remote_active_rq'] as const;

/**
 * The gauges the sidecar counts in flight from, which Istio's default stats matcher drops:
 * `downstream_rq_active` (requests: a drain never closes idle keep-alive connections, docs/envoy.md)
 * and `downstream_cx_active` (the listeners' connections: TCP passthrough, and the HTTP connection
 * managers without request gauges). Istio keeps the second only when the pod sets
 * EXIT_ON_ZERO_ACTIVE_CONNECTIONS (istio/istio pkg/bootstrap/config.go); without either the sidecar
 * finds nothing to count and stays in FAULT.
 */
export const COUNTING_STATS_SUFFIXES = [REQUESTS_ACTIVE, CONNECTIONS_ACTIVE] as const;

/**
 * WebSockets open (`http.<prefix>.downstream_cx_upgrades_active`): the sidecar reports them apart
 * from requests (GET /state `envoy.proxy.lastCount.upgrades`, gracegate_hc_long_lived_connections),
 * which Istio's default stats matcher drops; kept when spec.traffic.longLived lists websocket.
 */
export const UPGRADES_STATS_SUFFIX = UPGRADES_ACTIVE;

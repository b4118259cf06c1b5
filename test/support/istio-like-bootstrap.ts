/**
 * An Envoy bootstrap that reproduces what the hc sidecar meets in an Istio ingress-gateway pod,
 * with static resources instead of a control plane (test support, not shipped).
 *
 * Reproduced (istio/istio tools/packaging/common/envoy_bootstrap.json, pkg/bootstrap/config.go,
 * pkg/envoy/proxy.go, pilot/pkg/networking/core/listener.go):
 * - admin on 127.0.0.1 (Istio: 127.0.0.1:15000), with the `prometheus_stats` cluster pointing at it;
 * - the traffic listener named `0.0.0.0_8080`, `traffic_direction: OUTBOUND` (gateway listeners are
 *   outbound, so `drain_listeners?inboundonly` leaves them alone), stats under
 *   `listener.0.0.0.0_8080.*`; its HTTP connection manager with Istio's stat prefix
 *   `outbound_0.0.0.0_8080`, `codec_type: AUTO` (HTTP/1.1 and h2c), `stream_idle_timeout: 0s`,
 *   WebSocket upgrades allowed, `use_remote_address: true`, route `timeout: 0s`, no `drain_timeout`
 *   (Envoy's default 5 s; overridable for tests) and no `idle_timeout` (Envoy's default 1 h; Istio
 *   sets it only from the IDLE_TIMEOUT proxy metadata); it routes to the upstream app's cluster,
 *   named as Istio names one (`outbound|80||app.test.svc.cluster.local`);
 * - the readiness listener (15021: HCM `agent`, `/healthz/ready` to the `agent` cluster) and the
 *   Prometheus listener (15090: HCM `stats`, `/stats/prometheus` to the admin), stats under
 *   `listener.0.0.0.0_15021.*` / `listener.0.0.0.0_15090.*`;
 * - ADS over the `xds-grpc` cluster (HTTP/2), LDS and CDS from it with `initial_fetch_timeout: 0s`:
 *   the stream stays open for the life of the process (`cluster.xds-grpc.upstream_rq_active: 1`);
 * - Istio's default `stats_matcher` inclusion list: only stats with the prefixes `reporter=`,
 *   `cluster_manager`, `listener_manager`, `server`, `cluster.xds-grpc`, `wasm`, `component`,
 *   `istio`, the suffixes `rbac.allowed`, `rbac.denied`, `shadow_allowed`, `shadow_denied`, or
 *   matching `vhost\..*\.route\..*` exist; `downstream_cx_active` joins them only when the pod
 *   sets EXIT_ON_ZERO_ACTIVE_CONNECTIONS (istio/istio 1.27.9 and 1.30.3 pkg/bootstrap/config.go:
 *   `requiredEnvoyStatsMatcherInclusionSuffixes` then, else only the rbac ones; option
 *   `exitOnZeroActiveConnections` here). So on a default Istio proxy neither
 *   `http.<prefix>.downstream_rq_active` nor any `downstream_cx_active` is there; a pod that wants
 *   them adds the suffixes through `proxyStatsMatcher.inclusionSuffixes` (option
 *   `statsInclusionSuffixes` here; gracegate's pod changes add both);
 * - pilot-agent's command line: `--drain-time-s <drainDuration, 45>` `--drain-strategy immediate`
 *   `--local-address-ip-version v4` `--file-flush-interval-msec 1000` `--disable-hot-restart`
 *   `--allow-unknown-static-fields`, `--concurrency` (2: per-worker listener stats exist).
 *
 * Not reproduced: TLS and SDS (`sds-grpc`), listeners and routes pushed by istiod, Istio's filters
 * (metadata exchange, stats plugin, RBAC), Istio's stats tag list (Envoy's default tags apply),
 * traffic access logs (the admin's go to stderr here, Istio sends them to /dev/null; with
 * `streamEndLog`, every traffic stream's end too: stream-end-log.ts), tracing, the pilot-agent process itself (its 15020 server, SIGTERM handling) and the
 * node metadata. Every address is 127.0.0.1 (loopback only); ports are free ones, not 15000/15021/
 * 15090/8080 (the stat names carry Istio's numbers).
 */
import { HCM_FILTER, HCM_TYPE, TCP_PROXY_FILTER, TCP_PROXY_TYPE } from '../../src/pod/extra-objects';
import { applyEnvoyFilterPatches } from './envoy-filter-patches';
import { streamEndLogFormat } from './stream-end-log';

export const TRAFFIC_LISTENER = '0.0.0.0_8080';
export const TRAFFIC_HCM_PREFIX = `outbound_${TRAFFIC_LISTENER}`;
export const READINESS_LISTENER = '0.0.0.0_15021';
export const PROMETHEUS_LISTENER = '0.0.0.0_15090';
export const UPSTREAM_CLUSTER = 'outbound|80||app.test.svc.cluster.local';
/** The gRPC app's cluster (HTTP/2 upstream), routed by the traffic listener for `GRPC_ROUTE_PREFIX`. */
export const GRPC_CLUSTER = 'outbound|50051||grpc.test.svc.cluster.local';
export const GRPC_ROUTE_PREFIX = '/gracegate.test.';
/** A TCP listener as Istio names one (a Gateway server with protocol TCP on 9000), tcp_proxy to `TCP_CLUSTER`. */
export const TCP_LISTENER = '0.0.0.0_9000';
export const TCP_CLUSTER = 'outbound|9000||tcp.test.svc.cluster.local';
/** Starts each admin access-log line on stderr (real-envoy.ts parses them into `adminCalls()`). */
export const ADMIN_LOG_MARK = 'gracegate-admin-call';

/** Istio's default stats inclusion list (istio/istio pkg/bootstrap/config.go + the bootstrap template). */
export const ISTIO_STATS_INCLUSION = {
  prefixes: ['reporter=', 'cluster_manager', 'listener_manager', 'server', 'cluster.xds-grpc', 'wasm', 'component', 'istio'],
  suffixes: ['rbac.allowed', 'rbac.denied', 'shadow_allowed', 'shadow_denied'],
  regexes: ['vhost\\..*\\.route\\..*'],
  /** Added to the suffixes only with EXIT_ON_ZERO_ACTIVE_CONNECTIONS (pilot-agent then waits on them). */
  exitOnZeroSuffixes: ['downstream_cx_active'],
} as const;

export interface BootstrapPorts {
  readonly admin: number;
  /** 0: Envoy picks (read back from /listeners). */
  readonly traffic: number;
  readonly readiness: number;
  readonly prometheus: number;
  readonly upstream: number;
  readonly xds: number;
}

export interface BootstrapOptions {
  /** The HCM's drain_timeout. @default undefined (unset: Envoy's 5 s, as on Istio) */
  readonly hcmDrainTimeoutMs?: number;
  /** The HCM's idle_timeout. @default undefined (unset: Envoy's 1 h, as on Istio without IDLE_TIMEOUT) */
  readonly hcmIdleTimeoutMs?: number;
  /** Added to Istio's stats inclusion suffixes, e.g. 'downstream_rq_active'. @default [] */
  readonly statsInclusionSuffixes?: readonly string[];
  /** Istio's default stats matcher; false: every stat exists (a mesh that opened it up). @default true */
  readonly istioStatsMatcher?: boolean;
  /** The pod sets EXIT_ON_ZERO_ACTIVE_CONNECTIONS: Istio's matcher then keeps downstream_cx_active. @default false */
  readonly exitOnZeroActiveConnections?: boolean;
  /** More upstream clusters, as a gateway routing to many services has (for stats volume). @default 0 */
  readonly extraClusters?: number;
  /** Adds the gRPC app's cluster (HTTP/2) and a route for `GRPC_ROUTE_PREFIX` to it. @default undefined (none) */
  readonly grpcUpstreamPort?: number;
  /** Adds `TCP_LISTENER`, a tcp_proxy to this port (Istio: a Gateway server with protocol TCP). @default undefined (none) */
  readonly tcpUpstreamPort?: number;
  /** The HCM's common_http_protocol_options.max_connection_duration. @default undefined (unset, as on Istio) */
  readonly hcmMaxConnectionDurationMs?: number;
  /** The HCM's common_http_protocol_options.max_stream_duration. @default undefined (unset, as on Istio) */
  readonly hcmMaxStreamDurationMs?: number;
  /** The tcp_proxy's max_downstream_connection_duration. @default undefined (unset, as on Istio) */
  readonly tcpMaxConnectionDurationMs?: number;
  /** An Istio EnvoyFilter's configPatches, applied to the gateway listeners as istiod would (envoy-filter-patches.ts). @default [] */
  readonly envoyFilterPatches?: readonly unknown[];
  /**
   * Log the end of every HTTP stream on the traffic listener and of every tcp_proxy connection to
   * stderr (stream-end-log.ts): the test's witness of what Envoy served and how each stream ended.
   * An observation only. @default false
   */
  readonly streamEndLog?: boolean;
  /** Runtime keys in the static layer (e.g. a reloadable feature turned off). @default {} */
  readonly runtime?: Readonly<Record<string, string | number | boolean>>;
}

const HOST = '127.0.0.1';
const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };
const H2_UPSTREAM = {
  'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
    '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
    explicit_http_config: { http2_protocol_options: {} },
  },
};

const address = (port: number) => ({ socket_address: { protocol: 'TCP', address: HOST, port_value: port } });
const seconds = (ms: number) => `${ms / 1000}s`;

function staticCluster(name: string, port: number, extra: Record<string, unknown> = {}) {
  return {
    name,
    type: 'STATIC',
    connect_timeout: '1s',
    lb_policy: 'ROUND_ROBIN',
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: address(port) } }] }] },
    ...extra,
  };
}

function simpleListener(statPrefix: string, port: number, hcmPrefix: string, pathPrefix: string, cluster: string) {
  return {
    name: statPrefix,
    stat_prefix: statPrefix,
    address: address(port),
    filter_chains: [
      {
        filters: [
          {
            name: HCM_FILTER,
            typed_config: {
              '@type': HCM_TYPE,
              codec_type: 'AUTO',
              stat_prefix: hcmPrefix,
              route_config: { virtual_hosts: [{ name: 'backend', domains: ['*'], routes: [{ match: { prefix: pathPrefix }, route: { cluster } }] }] },
              http_filters: [ROUTER],
            },
          },
        ],
      },
    ],
  };
}

/** An access log to Envoy's stderr in `format`, for the entries `filter` lets through (all without one). */
function stderrLog(format: string, filter?: Record<string, unknown>): unknown[] {
  return [
    {
      name: 'envoy.access_loggers.stderr',
      ...(filter ? { filter } : {}),
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StderrAccessLog',
        log_format: { text_format_source: { inline_string: format } },
      },
    },
  ];
}

/** The bootstrap as a JSON-serialisable object (Envoy reads it with `-c file.json`). */
export function istioLikeBootstrap(ports: BootstrapPorts, options: BootstrapOptions = {}): Record<string, unknown> {
  const hcm: Record<string, unknown> = {
    '@type': HCM_TYPE,
    codec_type: 'AUTO',
    stat_prefix: TRAFFIC_HCM_PREFIX,
    use_remote_address: true,
    stream_idle_timeout: '0s',
    upgrade_configs: [{ upgrade_type: 'websocket' }],
    route_config: {
      name: 'http.8080',
      virtual_hosts: [
        {
          name: '*:8080',
          domains: ['*'],
          routes: [
            ...(options.grpcUpstreamPort === undefined ? [] : [{ match: { prefix: GRPC_ROUTE_PREFIX }, route: { cluster: GRPC_CLUSTER, timeout: '0s' } }]),
            { match: { prefix: '/' }, route: { cluster: UPSTREAM_CLUSTER, timeout: '0s' } },
          ],
        },
      ],
    },
    http_filters: [ROUTER],
  };
  if (options.hcmDrainTimeoutMs !== undefined) hcm['drain_timeout'] = seconds(options.hcmDrainTimeoutMs);
  const common: Record<string, string> = {};
  if (options.hcmIdleTimeoutMs !== undefined) common['idle_timeout'] = seconds(options.hcmIdleTimeoutMs);
  if (options.hcmMaxConnectionDurationMs !== undefined) common['max_connection_duration'] = seconds(options.hcmMaxConnectionDurationMs);
  if (options.hcmMaxStreamDurationMs !== undefined) common['max_stream_duration'] = seconds(options.hcmMaxStreamDurationMs);
  if (Object.keys(common).length > 0) hcm['common_http_protocol_options'] = common;
  if (options.streamEndLog) hcm['access_log'] = stderrLog(streamEndLogFormat('http'));
  const tcpListener =
    options.tcpUpstreamPort === undefined
      ? []
      : [
          {
            name: TCP_LISTENER,
            stat_prefix: TCP_LISTENER,
            address: address(0),
            traffic_direction: 'OUTBOUND',
            filter_chains: [
              {
                filters: [
                  {
                    name: TCP_PROXY_FILTER,
                    typed_config: {
                      '@type': TCP_PROXY_TYPE,
                      stat_prefix: TCP_CLUSTER,
                      cluster: TCP_CLUSTER,
                      ...(options.streamEndLog ? { access_log: stderrLog(streamEndLogFormat('tcp')) } : {}),
                      ...(options.tcpMaxConnectionDurationMs === undefined
                        ? {}
                        : { max_downstream_connection_duration: seconds(options.tcpMaxConnectionDurationMs) }),
                    },
                  },
                ],
              },
            ],
          },
        ];

  const pattern = (kind: 'prefix' | 'suffix') => (value: string) => ({ [kind]: value });
  const bootstrap: Record<string, unknown> = {
    node: { id: 'router~127.0.0.1~gracegate-test.istio-system~istio-system.svc.cluster.local', cluster: 'istio-ingressgateway.istio-system' },
    layered_runtime: {
      layers: [
        { name: 'global config', static_layer: { ...(options.runtime ?? {}) } },
        { name: 'admin', admin_layer: {} },
      ],
    },
    stats_config:
      options.istioStatsMatcher === false
        ? {}
        : {
            stats_matcher: {
              inclusion_list: {
                patterns: [
                  ...ISTIO_STATS_INCLUSION.prefixes.map(pattern('prefix')),
                  ...[
                    ...ISTIO_STATS_INCLUSION.suffixes,
                    ...(options.exitOnZeroActiveConnections === true ? ISTIO_STATS_INCLUSION.exitOnZeroSuffixes : []),
                    ...(options.statsInclusionSuffixes ?? []),
                  ].map(pattern('suffix')),
                  ...ISTIO_STATS_INCLUSION.regexes.map((regex) => ({ safe_regex: { regex } })),
                ],
              },
            },
          },
    // Istio logs admin requests to /dev/null; here to stderr, so a test can see which calls were made.
    admin: { address: address(ports.admin), access_log: stderrLog(`${ADMIN_LOG_MARK} %REQ(:METHOD)% %REQ(:PATH)% %RESPONSE_CODE%\n`) },
    dynamic_resources: {
      lds_config: { ads: {}, initial_fetch_timeout: '0s', resource_api_version: 'V3' },
      cds_config: { ads: {}, initial_fetch_timeout: '0s', resource_api_version: 'V3' },
      ads_config: {
        api_type: 'GRPC',
        set_node_on_first_message_only: true,
        transport_api_version: 'V3',
        grpc_services: [{ envoy_grpc: { cluster_name: 'xds-grpc' } }],
      },
    },
    static_resources: {
      clusters: [
        staticCluster('prometheus_stats', ports.admin),
        staticCluster('agent', ports.upstream),
        staticCluster('xds-grpc', ports.xds, { typed_extension_protocol_options: H2_UPSTREAM, max_requests_per_connection: 1 }),
        staticCluster(UPSTREAM_CLUSTER, ports.upstream),
        ...(options.grpcUpstreamPort === undefined
          ? []
          : [staticCluster(GRPC_CLUSTER, options.grpcUpstreamPort, { typed_extension_protocol_options: H2_UPSTREAM })]),
        ...(options.tcpUpstreamPort === undefined ? [] : [staticCluster(TCP_CLUSTER, options.tcpUpstreamPort)]),
        ...Array.from({ length: options.extraClusters ?? 0 }, (_, i) => staticCluster(`outbound|80||svc-${i}.test.svc.cluster.local`, ports.upstream)),
      ],
      listeners: [
        simpleListener(PROMETHEUS_LISTENER, ports.prometheus, 'stats', '/stats/prometheus', 'prometheus_stats'),
        simpleListener(READINESS_LISTENER, ports.readiness, 'agent', '/healthz/ready', 'agent'),
        {
          name: TRAFFIC_LISTENER,
          stat_prefix: TRAFFIC_LISTENER,
          address: address(ports.traffic),
          traffic_direction: 'OUTBOUND',
          filter_chains: [{ filters: [{ name: HCM_FILTER, typed_config: hcm }] }],
        },
        ...tcpListener,
      ],
    },
  };
  const applied = applyEnvoyFilterPatches(bootstrap, options.envoyFilterPatches ?? []);
  applied.forEach((n, i) => {
    if (n === 0) throw new Error(`envoyFilterPatches[${i}] matched no filter of the gateway listeners`);
  });
  return bootstrap;
}

/** pilot-agent's Envoy flags (istio/istio pkg/envoy/proxy.go), with the drain settings given. */
export function istioAgentArgs(options: {
  drainTimeS: number;
  drainStrategy: 'immediate' | 'gradual';
  concurrency: number;
  /** pilot-agent passes 1000; a test that reads Envoy's access log at once passes less (stream-end-log.ts). */
  fileFlushIntervalMs?: number;
}): string[] {
  return [
    '--drain-time-s',
    String(options.drainTimeS),
    '--drain-strategy',
    options.drainStrategy,
    '--local-address-ip-version',
    'v4',
    '--file-flush-interval-msec',
    String(options.fileFlushIntervalMs ?? 1000),
    '--disable-hot-restart',
    '--allow-unknown-static-fields',
    '--concurrency',
    String(options.concurrency),
  ];
}

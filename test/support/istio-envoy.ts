/**
 * A real Envoy dressed as an Istio 1.27 gateway where the observability tests need more than the
 * rig's bootstrap (test/support/istio-like-bootstrap.ts) reproduces:
 * - Istio's stats tags (`use_all_default_tags: false` and Istio's own `stats_tags`), and the HTTP
 *   connection manager prefix with Istio's `;` delimiter (`outbound_0.0.0.0_8080;`), so
 *   /stats/prometheus prints the names a Prometheus scraping a real gateway sees
 *   (istio/istio 1.27.9 tools/packaging/common/envoy_bootstrap.json, pilot/pkg/networking/core/gateway.go
 *   and util.DelimitedStatsPrefix);
 * - an access log in Istio's default text or JSON format (pilot/pkg/model/telemetry_logging.go
 *   EnvoyTextLogFormat and EnvoyJSONLogFormatIstio), written to a file.
 * Everything else is the rig's: its bootstrap as the base, its fake xDS server, its upstream app.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { adminRequest } from '../../src/hc/envoy-admin';
import { startFakeXds, type FakeXds } from './fake-xds';
import { istioAgentArgs, istioLikeBootstrap, TRAFFIC_LISTENER } from './istio-like-bootstrap';
import { envoyBinary, freePort, pinnedEnvoys } from './real-envoy';
import { startTestUpstream, type TestUpstream } from './test-upstream';
import { testDir } from './tmp';
import { sleep } from './wait';

/** Istio's gateway HCM stat prefix for the 8080 listener, delimiter included. */
export const ISTIO_HCM_PREFIX = 'outbound_0.0.0.0_8080;';

/** The stats tags of Istio 1.27.9's bootstrap that name the series gracegate reads. */
export const ISTIO_STATS_TAGS = [
  { tag_name: 'cluster_name', regex: '^cluster(\\.(.+);)' },
  { tag_name: 'http_conn_manager_prefix', regex: '^http\\.(((?:[_.[:digit:]\\w]*|[_\\[\\]aAbBcCdDeEfF[:digit:]\\w\\:]*));\\.)' },
  { tag_name: 'tcp_prefix', regex: '^tcp\\.((.*?)\\.)\\w+?$' },
  { regex: '_rq(_(\\d{3}))$', tag_name: 'response_code' },
  { tag_name: 'response_code_class', regex: '_rq(_(\\dxx))$' },
  { tag_name: 'http_conn_manager_listener_prefix', regex: '^listener(?=\\.).*?\\.http\\.(((?:[_.[:digit:]]*|[_\\[\\]aAbBcCdDeEfF[:digit:]]*))\\.)' },
  { tag_name: 'listener_address', regex: '^listener\\.(((?:[_.[:digit:]]*|[_\\[\\]aAbBcCdDeEfF[:digit:]]*))\\.)' },
] as const;

/** Istio's default text access log format (EnvoyTextLogFormat). */
export const ISTIO_TEXT_LOG_FORMAT =
  '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% ' +
  '%RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS% "%UPSTREAM_TRANSPORT_FAILURE_REASON%" %BYTES_RECEIVED% %BYTES_SENT% ' +
  '%DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" ' +
  '"%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" %UPSTREAM_CLUSTER_RAW% %UPSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% ' +
  '%DOWNSTREAM_REMOTE_ADDRESS% %REQUESTED_SERVER_NAME% %ROUTE_NAME%\n';

/** Istio's default JSON access log fields (EnvoyJSONLogFormatIstio). */
export const ISTIO_JSON_LOG_FORMAT: Readonly<Record<string, string>> = {
  start_time: '%START_TIME%',
  route_name: '%ROUTE_NAME%',
  method: '%REQ(:METHOD)%',
  path: '%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%',
  protocol: '%PROTOCOL%',
  response_code: '%RESPONSE_CODE%',
  response_flags: '%RESPONSE_FLAGS%',
  response_code_details: '%RESPONSE_CODE_DETAILS%',
  connection_termination_details: '%CONNECTION_TERMINATION_DETAILS%',
  bytes_received: '%BYTES_RECEIVED%',
  bytes_sent: '%BYTES_SENT%',
  duration: '%DURATION%',
  upstream_service_time: '%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%',
  x_forwarded_for: '%REQ(X-FORWARDED-FOR)%',
  user_agent: '%REQ(USER-AGENT)%',
  request_id: '%REQ(X-REQUEST-ID)%',
  authority: '%REQ(:AUTHORITY)%',
  upstream_host: '%UPSTREAM_HOST%',
  upstream_cluster: '%UPSTREAM_CLUSTER_RAW%',
  upstream_local_address: '%UPSTREAM_LOCAL_ADDRESS%',
  downstream_local_address: '%DOWNSTREAM_LOCAL_ADDRESS%',
  downstream_remote_address: '%DOWNSTREAM_REMOTE_ADDRESS%',
  requested_server_name: '%REQUESTED_SERVER_NAME%',
  upstream_transport_failure_reason: '%UPSTREAM_TRANSPORT_FAILURE_REASON%',
};

export interface IstioEnvoyOptions {
  readonly version: string;
  /** Added to Istio's stats inclusion suffixes (as proxyStatsMatcher.inclusionSuffixes does). */
  readonly statsInclusionSuffixes?: readonly string[];
  readonly accessLog?: { readonly path: string; readonly format: 'text' | 'json' };
  /** Named routes (as an Istio VirtualService's http[].name gives them) by path prefix; the rest is the default route. */
  readonly routes?: readonly { readonly name: string; readonly prefix: string }[];
  /** Route to this port instead of a fresh test upstream. */
  readonly upstreamPort?: number;
  /** Envoy's stats_flush_interval (histograms reach /stats/prometheus at each flush). @default Envoy's 5 s */
  readonly statsFlushIntervalMs?: number;
}

export interface IstioEnvoy {
  readonly version: string;
  readonly adminUrl: string;
  readonly trafficUrl: string;
  readonly trafficPort: number;
  /** host:port of the admin, whose /stats/prometheus Prometheus scrapes (15090 routes there on Istio). */
  readonly adminHostPort: string;
  readonly upstream: TestUpstream | undefined;
  logs(): string;
  stop(): Promise<void>;
}

type Json = Record<string, unknown>;

function dress(bootstrap: Json, options: IstioEnvoyOptions): Json {
  const stats = bootstrap['stats_config'] as Json;
  stats['use_all_default_tags'] = false;
  stats['stats_tags'] = ISTIO_STATS_TAGS.map((t) => ({ ...t }));
  const listeners = (bootstrap['static_resources'] as { listeners: Json[] }).listeners;
  const traffic = listeners.find((l) => l['name'] === TRAFFIC_LISTENER)!;
  const hcm = ((traffic['filter_chains'] as Json[])[0]!['filters'] as Json[])[0]!['typed_config'] as Json;
  hcm['stat_prefix'] = ISTIO_HCM_PREFIX;
  if (options.routes) {
    const vhost = ((hcm['route_config'] as Json)['virtual_hosts'] as Json[])[0]!;
    const fallback = (vhost['routes'] as Json[])[0]!;
    vhost['routes'] = [...options.routes.map((r) => ({ name: r.name, match: { prefix: r.prefix }, route: fallback['route'] })), fallback];
  }
  if (options.statsFlushIntervalMs !== undefined) bootstrap['stats_flush_interval'] = `${options.statsFlushIntervalMs / 1000}s`;
  if (options.accessLog) {
    const format =
      options.accessLog.format === 'text' ? { text_format_source: { inline_string: ISTIO_TEXT_LOG_FORMAT } } : { json_format: ISTIO_JSON_LOG_FORMAT };
    hcm['access_log'] = [
      {
        name: 'envoy.access_loggers.file',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog',
          path: options.accessLog.path,
          log_format: format,
        },
      },
    ];
  }
  return bootstrap;
}

export async function startIstioEnvoy(options: IstioEnvoyOptions): Promise<IstioEnvoy> {
  const binary = envoyBinary(options.version);
  if (!fs.existsSync(binary)) pinnedEnvoys(); // throws the install hint
  const dir = testDir(`gracegate-istio-envoy-${options.version}-`);
  const xds: FakeXds = await startFakeXds();
  const upstream = options.upstreamPort === undefined ? await startTestUpstream() : undefined;
  const adminPort = await freePort();
  const base = istioLikeBootstrap(
    { admin: adminPort, traffic: 0, readiness: 0, prometheus: 0, upstream: options.upstreamPort ?? upstream!.port, xds: xds.port },
    { statsInclusionSuffixes: options.statsInclusionSuffixes ?? [] },
  );
  const bootstrapPath = path.join(dir, 'envoy.json');
  fs.writeFileSync(bootstrapPath, JSON.stringify(dress(base, options), null, 2));
  // --file-flush-interval-msec 1000 as pilot-agent passes it: access log lines reach the file within 1 s.
  const args = ['-c', bootstrapPath, ...istioAgentArgs({ drainTimeS: 45, drainStrategy: 'immediate', concurrency: 2 }), '-l', 'warning'];
  const child: ChildProcess = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (c: Buffer) => {
    log = (log + c.toString()).slice(-256 * 1024);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const cleanup = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    await Promise.all([xds.close(), upstream?.close()]);
  };
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`Envoy ${options.version} exited at start:\n${log.slice(-4000)}`);
      if (Date.now() > deadline) throw new Error(`Envoy ${options.version} not LIVE within 20 s:\n${log.slice(-4000)}`);
      const ready = await adminRequest(adminUrl, 'GET', '/ready', 500).catch(() => undefined);
      if (ready?.status === 200 && ready.body.trim() === 'LIVE') break;
      await sleep(50);
    }
    const listeners = JSON.parse((await adminRequest(adminUrl, 'GET', '/listeners?format=json', 2000)).body) as {
      listener_statuses: { name: string; local_address?: { socket_address?: { port_value?: number } } }[];
    };
    const trafficPort = listeners.listener_statuses.find((l) => l.name === TRAFFIC_LISTENER)?.local_address?.socket_address?.port_value;
    if (!trafficPort) throw new Error(`no bound port for ${TRAFFIC_LISTENER}`);
    let stopping: Promise<void> | undefined;
    return {
      version: options.version,
      adminUrl,
      trafficUrl: `http://127.0.0.1:${trafficPort}`,
      trafficPort,
      adminHostPort: `127.0.0.1:${adminPort}`,
      upstream,
      logs: () => log,
      stop: () => (stopping ??= cleanup()),
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

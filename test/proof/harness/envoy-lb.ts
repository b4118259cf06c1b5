/**
 * The `envoy` LB model on a real Envoy: an in-mesh Envoy in front of the gateway pods, probing each
 * pod's sidecar with an active HTTP health check. The cluster's health-check fields are
 * `gracegate lb-config`'s output for the lab spec, parsed as written (YAML), and each endpoint gets
 * `health_check_config.port_value` = its sidecar's health port, as that output's comment says. The
 * route carries Istio's default retry policy (istio/istio pilot/pkg/networking/core/route/retry
 * `DefaultPolicy`: 2 retries on connect-failure, refused-stream, unavailable, cancelled, to a host
 * not tried before), since an in-mesh Envoy gets it from istiod.
 *
 * One addition, for the lab: `no_traffic_interval` = `interval` on each health check. An Envoy
 * cluster that has never carried traffic checks every no_traffic_interval (Envoy's default 60 s)
 * and keeps that timer until it fires; a production LB has long carried traffic and checks every
 * `interval`, but this one starts with the run, so without it the first check after the start
 * would come a minute later (measured: a 503 never ejected the pod within a run).
 *
 * What HAProxy writes as lines, this one is read from: ejections and returns by polling admin
 * `/clusters` (health_flags) every POLL_MS, and requests from a stdout access log of HAProxy's shape
 * (client port, server, status, start, end).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { envoyBinary } from '../../support/real-envoy';
import type { FrontLb, LbCounters } from './front-lb';
import type { RequestLogLine, ServerEvent } from './haproxy';
import { httpCall } from './http';
import { freePort, Proc, sleep, waitFor } from './proc';

/** How often the harness reads the LB's view of each host (ejections are logged at this resolution). */
export const POLL_MS = 20;

/** Istio's default route retry policy (see the file header). */
const ISTIO_DEFAULT_RETRY = {
  retry_on: 'connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes',
  num_retries: 2,
  retry_host_predicate: [
    {
      name: 'envoy.retry_host_predicates.previous_hosts',
      typed_config: { '@type': 'type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate' },
    },
  ],
  host_selection_retry_max_attempts: 5,
};

/** Access log: start (epoch s.ms), duration ms, client port, upstream host, status, response flags. */
const ACCESS_LOG_FORMAT = '%START_TIME(%s.%3f)% %DURATION% %DOWNSTREAM_REMOTE_PORT% %UPSTREAM_HOST% %RESPONSE_CODE% %RESPONSE_FLAGS%\n';
const ACCESS_LINE = /^(\d+\.\d{3}) (\d+|-) (\d+) (\S+) (\d+) (\S+)$/;

export type EnvoyLbServer = { name: string; port: number; healthPort: number };

const address = (port: number) => ({ socket_address: { address: '127.0.0.1', port_value: port } });

/** The front Envoy's bootstrap: one listener, one cluster of the pods, lb-config's fields merged into the cluster. */
export function envoyLbBootstrap(ports: { listen: number; admin: number }, servers: EnvoyLbServer[], lbConfigYaml: string): Record<string, unknown> {
  const generated = parseYaml(lbConfigYaml) as Record<string, unknown> & { health_checks: Array<Record<string, unknown>> };
  const healthChecks = generated.health_checks.map((hc) => ({ ...hc, no_traffic_interval: hc['interval'] }));
  return {
    node: { id: 'e2e-front-lb', cluster: 'e2e' },
    admin: { address: address(ports.admin) },
    static_resources: {
      listeners: [
        {
          name: 'e2e',
          address: address(ports.listen),
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.http_connection_manager',
                  typed_config: {
                    '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
                    stat_prefix: 'e2e',
                    codec_type: 'AUTO',
                    access_log: [
                      {
                        name: 'envoy.access_loggers.stdout',
                        typed_config: {
                          '@type': 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog',
                          log_format: { text_format_source: { inline_string: ACCESS_LOG_FORMAT } },
                        },
                      },
                    ],
                    route_config: {
                      virtual_hosts: [
                        {
                          name: 'gateway',
                          domains: ['*'],
                          routes: [{ match: { prefix: '/' }, route: { cluster: 'gateway', timeout: '0s', retry_policy: ISTIO_DEFAULT_RETRY } }],
                        },
                      ],
                    },
                    http_filters: [
                      { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [
        {
          name: 'gateway',
          type: 'STATIC',
          connect_timeout: '1s',
          lb_policy: 'ROUND_ROBIN',
          load_assignment: {
            cluster_name: 'gateway',
            endpoints: [{ lb_endpoints: servers.map((s) => ({ endpoint: { address: address(s.port), health_check_config: { port_value: s.healthPort } } })) }],
          },
          ...generated,
          health_checks: healthChecks,
        },
      ],
    },
  };
}

export class EnvoyLb implements FrontLb {
  readonly kind = 'envoy';
  readonly events: ServerEvent[] = [];
  readonly requestLog: RequestLogLine[] = [];
  private polling = true;
  private readonly poller: Promise<void>;
  private readonly health = new Map<string, 'UP' | 'DOWN'>();

  private constructor(
    readonly proc: Proc,
    readonly version: string,
    readonly port: number,
    private readonly adminUrl: string,
    private readonly servers: EnvoyLbServer[],
    readonly configText: string,
  ) {
    const byAddress = new Map(servers.map((s) => [`127.0.0.1:${s.port}`, s.name]));
    proc.onLine((line) => {
      if (line.stream !== 'stdout') return;
      const m = ACCESS_LINE.exec(line.text.trim());
      if (!m) return;
      const startMs = Math.round(Number(m[1]) * 1000);
      this.requestLog.push({
        atMs: line.atMs,
        text: line.text,
        clientPort: Number(m[3]),
        server: byAddress.get(m[4]!) ?? m[4]!,
        status: Number(m[5]),
        terminationState: m[6] === '-' ? '----' : m[6]!,
        startMs,
        endMs: startMs + (m[2] === '-' ? 0 : Number(m[2])),
      });
    });
    this.poller = this.poll();
  }

  /** Starts a front Envoy of `version` with lb-config's cluster fields in front of `servers`. */
  static async start(dir: string, version: string, lbConfigYaml: string, servers: EnvoyLbServer[]): Promise<EnvoyLb> {
    const ports = { listen: await freePort(), admin: await freePort() };
    const bootstrap = envoyLbBootstrap(ports, servers, lbConfigYaml);
    const file = join(dir, 'front-envoy.json');
    writeFileSync(file, JSON.stringify(bootstrap, null, 2));
    const proc = new Proc('front-envoy', envoyBinary(version), [
      '-c',
      file,
      '--concurrency',
      '1',
      '--disable-hot-restart',
      '--file-flush-interval-msec',
      '50',
      '-l',
      'warning',
    ]);
    const adminUrl = `http://127.0.0.1:${ports.admin}`;
    try {
      await waitFor('the front Envoy /ready', 20_000, async () => {
        if (!proc.running) throw new Error(`front Envoy exited:\n${proc.tail()}`);
        return (await httpCall('GET', `${adminUrl}/ready`, 500)).status === 200 ? true : undefined;
      });
    } catch (err) {
      await proc.stop(1000);
      throw err;
    }
    const configText = [
      `# front Envoy (test/proof/harness/envoy-lb.ts); the cluster's health_checks and close_connections_on_host_health_failure are gracegate lb-config output`,
      lbConfigYaml,
    ].join('\n');
    return new EnvoyLb(proc, `Envoy ${version}`, ports.listen, adminUrl, servers, configText);
  }

  /** Host health by server name, from admin /clusters (`gateway::127.0.0.1:PORT::health_flags::healthy`). */
  private async readHealth(): Promise<Map<string, 'UP' | 'DOWN'>> {
    const text = (await httpCall('GET', `${this.adminUrl}/clusters`, 1000)).body;
    const out = new Map<string, 'UP' | 'DOWN'>();
    for (const s of this.servers) {
      const flags = new RegExp(`^gateway::127\\.0\\.0\\.1:${s.port}::health_flags::(\\S+)`, 'm').exec(text)?.[1];
      if (flags !== undefined) out.set(s.name, flags === 'healthy' ? 'UP' : 'DOWN');
    }
    return out;
  }

  private async poll(): Promise<void> {
    while (this.polling) {
      try {
        const now = await this.readHealth();
        for (const [name, state] of now) {
          const before = this.health.get(name);
          if (before !== undefined && before !== state)
            this.events.push({
              atMs: Date.now(),
              server: name,
              state,
              sessionsActive: 0,
              line: `${name} ${before} -> ${state} (admin /clusters health_flags)`,
            });
          this.health.set(name, state);
        }
      } catch {
        // the admin is busy or going away: the next poll tells
      }
      await sleep(POLL_MS);
    }
  }

  async counters(): Promise<LbCounters> {
    const text = (await httpCall('GET', `${this.adminUrl}/stats?filter=${encodeURIComponent('^cluster\\.gateway\\.')}`, 1000)).body;
    const stat = (name: string): number => Number(new RegExp(`^cluster\\.gateway\\.${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    return {
      econ: stat('upstream_cx_connect_fail'),
      eresp: stat('upstream_rq_rx_reset'),
      wretr: stat('upstream_rq_retry'),
      wredis: 0,
      srvAbrt: stat('upstream_cx_destroy_with_active_rq'),
      hrsp5xx: stat('upstream_rq_5xx'),
    };
  }

  async waitStatus(server: string, status: RegExp, timeoutMs: number): Promise<void> {
    await waitFor(`front Envoy host ${server} ${status}`, timeoutMs, () => (status.test(this.health.get(server) ?? '') ? true : undefined), POLL_MS);
  }

  async stop(): Promise<void> {
    this.polling = false;
    await this.poller;
    await this.proc.stop(2000);
  }
}

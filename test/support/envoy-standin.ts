/**
 * A STAND-IN FOR ENVOY (test support, not shipped). It is not Envoy: it is a small Node program
 * that reproduces the behaviours the hc sidecar depends on, so fault-injection tests can drive the
 * real sidecar against it over real HTTP. What it reproduces was measured on the real Envoy 1.36.4
 * and 1.40.0 (docs/envoy.md); test/hc/envoy-conformance.test.ts runs the same assertions against it
 * and against each real Envoy, so a change here that disagrees with Envoy fails there.
 *
 * Reproduced (option `version`: '1.36.4' or '1.40.0' semantics):
 * - A traffic listener (HTTP/1.1 keep-alive, and HTTP/2 cleartext with prior knowledge on the same
 *   port, as Envoy's `codec_type: AUTO`) with `/`, `/slow?ms=N`, `/stream?chunks=N&intervalMs=M`
 *   and a health_check-filter path (503 + `x-envoy-immediate-health-check-fail` after
 *   `/healthcheck/fail`); optionally a TCP listener (echo, like a TLS-passthrough tcp_proxy).
 * - The drain, as Envoy's HTTP connection manager acts on it (`--drain-strategy immediate`): only
 *   when a response's headers go out after the drain started: HTTP/1 gets `Connection: close`,
 *   HTTP/2 a GOAWAY (NO_ERROR, last stream 2^31-1) and the session is closed the HCM's
 *   `drain_timeout` later. Nothing else: a response begun before the drain leaves its connection
 *   open, and an idle keep-alive connection is never closed by the drain (only by the HCM's
 *   `idle_timeout`, option `hcmIdleTimeoutMs`, 1 h by default as on Envoy).
 * - `POST /drain_listeners`: `?graceful` starts the drain and stops the listeners (new connects
 *   refused) after `--drain-time-s` unless `&skip_exit`; plain stops them at once and, on 1.40
 *   (envoy PR #47042, runtime guard `non_graceful_drain_notifies_connections`, option
 *   `plainDrainNotifiesConnections` to turn it off), starts the drain too; `?skip_exit` alone is a
 *   400 `skip_exit requires graceful` before 1.40 (and with the guard off) and drain-without-stop on
 *   1.40; `&inboundonly` only touches inbound listeners (these are outbound, as on an Istio
 *   gateway); a repeated graceful call is a 200 no-op; nothing undoes a drain.
 * - `/stats` (text, `filter` as a partial-match regex, `usedonly`, `type=Gauges|Counters`), `/stats?format=json`,
 *   `/stats/prometheus`, with the summing pitfalls: the admin request counting itself, permanent
 *   `cluster.xds-grpc` / `cluster.sds-grpc` upstream requests, the `agent` (15021) and `stats`
 *   (15090) connection managers and listeners, per-worker listener lines, Istio-style names
 *   (`listener.0.0.0.0_8080`, HCM `outbound_0.0.0.0_8080`) with real counts from the traffic
 *   listeners. `downstream_rq_active` gauges exist only with option `requestStats` (default true: a
 *   gracegate pod adds them to Istio's stats matcher, which otherwise drops every one of them).
 * - `/ready` and `/server_info` (version `standin/<version>/Clean/RELEASE/BoringSSL`; LIVE through
 *   a drain, DRAINING once the health check is failed), and the admin's "Method GET not allowed,
 *   POST required." for mutating endpoints.
 * - Faults for tests: admin down (connection refused), slow (answers after a delay), garbage.
 *
 * Not reproduced: TLS, WebSocket and other upgrades, the gradual drain strategy, Envoy's delayed
 * close (Envoy keeps a `Connection: close` connection open until the client closes it or
 * drain_timeout + 1 s; the stand-in closes it after the response), hot restart, xDS, upstream
 * clusters (requests are answered locally), histograms beyond one placeholder line.
 *
 * Stand-in extensions (not Envoy), under `/standin/`: `GET /standin/counts` (JSON) and
 * `POST /standin/fault?mode=none|down|slow|garbage&delayMs=N&forMs=N`, for a harness that runs the
 * stand-in as a separate process (`envoy-standin-main.ts`).
 */
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { Duplex } from 'node:stream';

export type AdminFault = 'none' | 'down' | 'slow' | 'garbage';
export type StandinVersion = '1.36.4' | '1.40.0';

export interface EnvoyStandinOptions {
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** HTTP traffic listener port. @default 0 (any free port) */
  readonly listenPort?: number;
  /** @default 0 */
  readonly adminPort?: number;
  /** A TCP (passthrough-like) listener; undefined: none. */
  readonly tcpPort?: number;
  /** Envoy's `--drain-time-s`. @default 600 (Envoy's default; Istio sets 45) */
  readonly drainTimeS?: number;
  /** The listeners' traffic_direction. @default 'outbound' (Istio gateway) */
  readonly trafficDirection?: 'outbound' | 'inbound';
  /** Whose drain semantics to reproduce (measured, docs/envoy.md). @default '1.36.4' (the Envoy of Istio 1.27, nearest wheel) */
  readonly version?: StandinVersion;
  /** The 1.40 runtime guard `non_graceful_drain_notifies_connections`. @default true from 1.40, else false */
  readonly plainDrainNotifiesConnections?: boolean;
  /**
   * The HTTP connection manager's `drain_timeout`: how long after its first GOAWAY an HTTP/2
   * connection is closed. @default 5000 (Envoy's default)
   */
  readonly hcmDrainTimeoutMs?: number;
  /**
   * The HTTP connection manager's `idle_timeout`: the only thing that closes an idle keep-alive
   * connection (HTTP/2: GOAWAY at it; HTTP/1: FIN drain_timeout + 1 s after it). @default 3600000 (Envoy's 1 h)
   */
  readonly hcmIdleTimeoutMs?: number;
  /** `http.<prefix>.downstream_rq_active` gauges exist (Istio: proxyStatsMatcher.inclusionSuffixes). @default true */
  readonly requestStats?: boolean;
  /** Path served by the health_check filter on the traffic listener. @default '/healthz' */
  readonly healthCheckPath?: string;
}

export interface StandinCounts {
  /** listener.0.0.0.0_8080.downstream_cx_active (HTTP/1 and HTTP/2) */
  readonly connections: number;
  /** http.outbound_0.0.0.0_8080.downstream_rq_active */
  readonly requests: number;
  /** listener.0.0.0.0_8443.downstream_cx_active */
  readonly tcpConnections: number;
  readonly requestsTotal: number;
  readonly listening: boolean;
  readonly draining: boolean;
  readonly healthFailed: boolean;
  /** When HTTP + TCP connections last reached 0 (epoch ms); null while some are open. */
  readonly zeroSince: number | null;
}

export interface AdminCall {
  readonly method: string;
  readonly path: string;
  readonly at: number;
  readonly status: number;
}

export interface EnvoyStandin {
  readonly host: string;
  readonly listenPort: number;
  readonly adminPort: number;
  readonly tcpPort: number | undefined;
  readonly adminUrl: string;
  readonly trafficUrl: string;
  counts(): StandinCounts;
  /** Every admin call but /standin/*, in order. */
  readonly adminCalls: readonly AdminCall[];
  /** The text `/stats` would answer now (the admin's self-count as for one request). */
  statsText(options?: { filter?: string; usedonly?: boolean }): string;
  setFault(mode: AdminFault, options?: { delayMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

const HTTP_LISTENER = '0.0.0.0_8080';
const HCM_PREFIX = `outbound_${HTTP_LISTENER}`;
const TCP_LISTENER = '0.0.0.0_8443';
const WORKERS = 2;
const H2_PREFACE = Buffer.from('PRI * HTTP/2.0');
/** Envoy's default delayed_close_timeout. */
const ENVOY_DELAYED_CLOSE_MS = 1000;
const MUTATING = new Set(['/drain_listeners', '/healthcheck/fail', '/healthcheck/ok', '/quitquitquit']);
const GARBAGE = '\u0000\u0013<html><body><h1>502 Bad Gateway</h1></body></html>\n\u00ff\u00fe';

interface StatEntry {
  readonly name: string;
  readonly value: number;
  readonly type: 'counter' | 'gauge';
  /** Prometheus family and tags, as Envoy's default tag extraction would make them. */
  readonly family: string;
  readonly tags: Readonly<Record<string, string>>;
}

type Tracked = { worker: number; active: number; idleTimer: NodeJS.Timeout | undefined };

export async function startEnvoyStandin(options: EnvoyStandinOptions = {}): Promise<EnvoyStandin> {
  const host = options.host ?? '127.0.0.1';
  const drainTimeMs = (options.drainTimeS ?? 600) * 1000;
  const outbound = (options.trafficDirection ?? 'outbound') === 'outbound';
  const healthCheckPath = options.healthCheckPath ?? '/healthz';
  const startedAt = Date.now();

  const httpSockets = new Map<net.Socket, Tracked>();
  const tcpSockets = new Map<net.Socket, Tracked>();
  const adminSockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const used = new Set<string>();
  const adminCalls: AdminCall[] = [];
  let nextWorker = 0;
  let requests = 0;
  let requestsTotal = 0;
  let cxTotal = 0;
  let adminRequests = 0;
  let listening = true;
  let draining = false;
  let drainedAll = false;
  let drainedInbound = false;
  let healthFailed = false;
  let fault: AdminFault = 'none';
  let faultDelayMs = 5000;
  let zeroSince: number | null = Date.now();
  let stopped = false;
  const version: StandinVersion = options.version ?? '1.36.4';
  const plainNotifies = options.plainDrainNotifiesConnections ?? version === '1.40.0';
  const requestStats = options.requestStats ?? true;
  const h2Sessions = new Set<http2.ServerHttp2Session>();

  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
    return t;
  };
  /** In flight as the sidecar counts it: HTTP requests plus TCP connections. */
  const updateZero = () => {
    if (requests + tcpSockets.size > 0) zeroSince = null;
    else zeroSince ??= Date.now();
  };
  const track = (map: Map<net.Socket, Tracked>, socket: net.Socket) => {
    map.set(socket, { worker: nextWorker++ % WORKERS, active: 0, idleTimer: undefined });
    cxTotal++;
    updateZero();
    socket.on('close', () => {
      const t = map.get(socket);
      if (t) disarmIdle(t);
      map.delete(socket);
      updateZero();
    });
  };

  // ---- traffic ----

  const disarmIdle = (t: Tracked) => {
    if (t.idleTimer !== undefined) clearTimeout(t.idleTimer);
    timers.delete(t.idleTimer!);
    t.idleTimer = undefined;
  };
  /** HTTP/1: the idle close (see h1IdleCloseMs). */
  const armIdle = (socket: net.Socket, t: Tracked) => {
    disarmIdle(t);
    if (t.active === 0) t.idleTimer = later(h1IdleCloseMs, () => socket.end());
  };

  /** Envoy's HCM on a response whose headers go out now: announce the close if draining. */
  const drainOnResponse = (h2session: http2.ServerHttp2Session | undefined): http.OutgoingHttpHeaders => {
    if (!draining) return {};
    if (h2session === undefined) return { connection: 'close' };
    if (!goaways.has(h2session)) {
      goaways.add(h2session);
      h2session.goaway(http2.constants.NGHTTP2_NO_ERROR, 2 ** 31 - 1);
      later(options.hcmDrainTimeoutMs ?? 5000, () => {
        if (!h2session.destroyed) h2session.close();
      });
    }
    return {};
  };
  const goaways = new WeakSet<http2.ServerHttp2Session>();

  // The HTTP/2 compatibility request/response are used through the HTTP/1 shapes they mirror.
  const handle = (req: http.IncomingMessage, res: http.ServerResponse, socket: net.Socket, h2session?: http2.ServerHttp2Session) => {
    const tracked = httpSockets.get(socket);
    if (tracked) {
      tracked.active++;
      disarmIdle(tracked);
    }
    requests++;
    requestsTotal++;
    updateZero();
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      requests--;
      if (tracked) tracked.active--;
      if (tracked && h2session === undefined) armIdle(socket, tracked);
      updateZero();
    };
    res.on('finish', finish);
    res.on('close', finish);
    const head = (status: number, headers: http.OutgoingHttpHeaders = {}) => {
      res.writeHead(status, { 'content-type': 'text/plain', server: 'envoy', ...drainOnResponse(h2session), ...headers });
    };
    const reply = (status: number, body: string, headers: http.OutgoingHttpHeaders = {}) => {
      if (res.destroyed) return;
      head(status, headers);
      res.end(body);
    };
    const url = new URL(req.url ?? '/', 'http://standin');
    req.resume();
    if (url.pathname === '/') return reply(200, 'ok\n');
    if (url.pathname === '/slow') {
      const ms = Number(url.searchParams.get('ms') ?? '1000');
      later(ms, () => reply(200, `slow ${ms}\n`));
      return;
    }
    if (url.pathname === '/stream') {
      const chunks = Number(url.searchParams.get('chunks') ?? '5');
      const intervalMs = Number(url.searchParams.get('intervalMs') ?? '100');
      head(200);
      let sent = 0;
      const tick = () => {
        if (res.destroyed) return;
        res.write(`chunk ${sent}\n`);
        if (++sent >= chunks) res.end();
        else later(intervalMs, tick);
      };
      tick();
      return;
    }
    if (url.pathname === healthCheckPath) {
      return healthFailed ? reply(503, '', { 'x-envoy-immediate-health-check-fail': 'true' }) : reply(200, '');
    }
    reply(404, '');
  };
  const traffic = http.createServer((req, res) => handle(req, res, req.socket));
  // Envoy closes an idle keep-alive connection only at the HCM idle_timeout (1 h by default); an
  // HTTP/1 one then goes through the drain_timeout and Envoy's 1 s delayed close before its FIN
  // (measured: FIN at idle_timeout + drain_timeout + 1 s). Node's own keep-alive timer is off.
  traffic.keepAliveTimeout = 0;
  const h1IdleCloseMs = (options.hcmIdleTimeoutMs ?? 3_600_000) + (options.hcmDrainTimeoutMs ?? 5000) + ENVOY_DELAYED_CLOSE_MS;
  traffic.headersTimeout = 0;
  traffic.requestTimeout = 0;
  const sessionSockets = new WeakMap<http2.ServerHttp2Session, net.Socket>();
  let connecting: net.Socket | undefined;
  const h2traffic = http2.createServer((req, res) => {
    const session = req.stream.session as http2.ServerHttp2Session;
    handle(req as unknown as http.IncomingMessage, res as unknown as http.ServerResponse, sessionSockets.get(session)!, session);
  });
  h2traffic.on('session', (session) => {
    h2Sessions.add(session);
    if (connecting) sessionSockets.set(session, connecting);
    session.on('close', () => h2Sessions.delete(session));
    session.on('error', () => {});
    if (options.hcmIdleTimeoutMs !== undefined) session.setTimeout(options.hcmIdleTimeoutMs, () => session.close());
  });
  /** HTTP/2 with prior knowledge or HTTP/1.1 on one port, like Envoy's codec_type AUTO. */
  const httpListener = net.createServer((socket) => {
    track(httpSockets, socket);
    socket.on('error', () => {});
    socket.once('data', (first: Buffer) => {
      if (!first.subarray(0, 14).equals(H2_PREFACE)) {
        armIdle(socket, httpSockets.get(socket)!);
        socket.pause();
        socket.unshift(first);
        traffic.emit('connection', socket);
        socket.resume();
        return;
      }
      // node:http2 reads a net.Socket's handle directly and would miss the bytes already read:
      // hand it a JS duplex that starts with them.
      const duplex = new Duplex({
        read: () => socket.resume(),
        write: (chunk, _enc, cb) => socket.write(chunk, cb),
        final: (cb) => socket.end(cb),
        destroy: (err, cb) => {
          socket.destroy();
          cb(err);
        },
      });
      socket.on('data', (c: Buffer) => {
        if (!duplex.push(c)) socket.pause();
      });
      socket.on('end', () => duplex.push(null));
      socket.on('close', () => duplex.destroy());
      duplex.push(first);
      connecting = socket;
      h2traffic.emit('connection', duplex);
      connecting = undefined;
    });
  });
  const tcpListener = net.createServer((socket) => {
    track(tcpSockets, socket);
    socket.on('error', () => {});
    socket.pipe(socket);
  });

  const startDrain = () => {
    if (!outbound || draining) return;
    draining = true;
  };
  const stopListeners = () => {
    if (!outbound || !listening) return;
    listening = false;
    httpListener.close();
    if (options.tcpPort !== undefined) tcpListener.close();
  };

  // ---- stats ----

  const stats = (): StatEntry[] => {
    const out: StatEntry[] = [];
    const gauge = (name: string, value: number, family: string, tags: Record<string, string> = {}) => out.push({ name, value, type: 'gauge', family, tags });
    const counter = (name: string, value: number, family: string, tags: Record<string, string> = {}) =>
      out.push({ name, value, type: 'counter', family, tags });
    const perWorker = (map: Map<net.Socket, Tracked>) => Array.from({ length: WORKERS }, (_, w) => [...map.values()].filter((t) => t.worker === w).length);
    const listener = (addr: string, active: number, workers: number[], total?: number) => {
      gauge(`listener.${addr}.downstream_cx_active`, active, 'envoy_listener_downstream_cx_active', { envoy_listener_address: addr });
      if (total !== undefined) counter(`listener.${addr}.downstream_cx_total`, total, 'envoy_listener_downstream_cx_total', { envoy_listener_address: addr });
      workers.forEach((n, w) =>
        gauge(`listener.${addr}.worker_${w}.downstream_cx_active`, n, 'envoy_listener_worker_downstream_cx_active', {
          envoy_listener_address: addr,
          envoy_worker_id: String(w),
        }),
      );
    };
    const cluster = (name: string, rq: number, cx: number) => {
      gauge(`cluster.${name}.upstream_cx_active`, cx, 'envoy_cluster_upstream_cx_active', { envoy_cluster_name: name });
      gauge(`cluster.${name}.upstream_rq_active`, rq, 'envoy_cluster_upstream_rq_active', { envoy_cluster_name: name });
    };
    const hcm = (prefix: string, cx: number, rq: number, rqTotal?: number) => {
      gauge(`http.${prefix}.downstream_cx_active`, cx, 'envoy_http_downstream_cx_active', { envoy_http_conn_manager_prefix: prefix });
      if (requestStats) gauge(`http.${prefix}.downstream_rq_active`, rq, 'envoy_http_downstream_rq_active', { envoy_http_conn_manager_prefix: prefix });
      if (rqTotal !== undefined)
        counter(`http.${prefix}.downstream_rq_total`, rqTotal, 'envoy_http_downstream_rq_total', { envoy_http_conn_manager_prefix: prefix });
    };
    // Istio's permanent control-plane streams: one upstream request each, forever.
    cluster('sds-grpc', 1, 1);
    cluster('xds-grpc', 1, 1);
    hcm('admin', adminSockets.size, adminRequests);
    hcm('agent', 1, 0); // the kubelet's readiness probe connection on 15021
    hcm(HCM_PREFIX, httpSockets.size, requests, requestsTotal);
    hcm('stats', 1, 0); // a Prometheus scrape connection on 15090 (Istio's HCM prefix there)
    listener('0.0.0.0_15021', 1, [1, 0]);
    listener('0.0.0.0_15090', 1, [0, 1]);
    listener(HTTP_LISTENER, httpSockets.size, perWorker(httpSockets), cxTotal);
    if (options.tcpPort !== undefined) {
      listener(TCP_LISTENER, tcpSockets.size, perWorker(tcpSockets));
      counter(`tcp.${HCM_PREFIX.replace(HTTP_LISTENER, TCP_LISTENER)}.downstream_cx_total`, tcpSockets.size, 'envoy_tcp_downstream_cx_total', {
        envoy_tcp_prefix: `outbound_${TCP_LISTENER}`,
      });
    }
    gauge('listener.admin.downstream_cx_active', adminSockets.size, 'envoy_listener_admin_downstream_cx_active');
    gauge('listener.admin.main_thread.downstream_cx_active', adminSockets.size, 'envoy_listener_admin_main_thread_downstream_cx_active');
    // Stopped listeners still count as active (measured on 1.36.4 and 1.40.0).
    gauge('listener_manager.total_listeners_active', 3 + (options.tcpPort !== undefined ? 1 : 0), 'envoy_listener_manager_total_listeners_active');
    // Nothing warming: a static bootstrap serves what it was given (the hc's start reads both).
    gauge('listener_manager.total_listeners_warming', 0, 'envoy_listener_manager_total_listeners_warming');
    gauge('cluster_manager.warming_clusters', 0, 'envoy_cluster_manager_warming_clusters');
    // Listeners a drain stopped (the hc asks at a start without a state file to trust).
    counter('listener_manager.listener_stopped', listening ? 0 : 1 + (options.tcpPort !== undefined ? 1 : 0), 'envoy_listener_manager_listener_stopped');
    gauge('server.live', healthFailed ? 0 : 1, 'envoy_server_live');
    gauge('server.state', healthFailed ? 1 : 0, 'envoy_server_state');
    gauge('server.total_connections', httpSockets.size + tcpSockets.size + 2, 'envoy_server_total_connections');
    for (const s of out) if (s.value !== 0) used.add(s.name);
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  };

  const selectStats = (params: URLSearchParams): StatEntry[] | string => {
    let all = stats();
    const filter = params.get('filter');
    if (filter !== null && filter !== '') {
      let re: RegExp;
      try {
        re = new RegExp(filter);
      } catch {
        return 'Invalid re2 regex';
      }
      all = all.filter((s) => re.test(s.name));
    }
    if (params.has('usedonly')) all = all.filter((s) => used.has(s.name));
    const type = params.get('type');
    if (type === 'Gauges' || type === 'Counters') all = all.filter((s) => s.type === (type === 'Gauges' ? 'gauge' : 'counter'));
    return all;
  };

  const statsAsText = (list: StatEntry[]) => {
    const lines = list.map((s) => `${s.name}: ${s.value}`);
    // One histogram line, printed after the counters and gauges as Envoy does.
    if (list.some((s) => s.name.startsWith(`listener.${HTTP_LISTENER}.`))) lines.push(`listener.${HTTP_LISTENER}.downstream_cx_length_ms: No recorded values`);
    return lines.length > 0 ? `${lines.join('\n')}\n` : '';
  };

  const prometheus = (list: StatEntry[]) => {
    const lines: string[] = [];
    const seen = new Set<string>();
    for (const s of [...list].sort((a, b) => a.family.localeCompare(b.family))) {
      if (!seen.has(s.family)) {
        seen.add(s.family);
        lines.push(`# TYPE ${s.family} ${s.type}`);
      }
      const tags = Object.entries(s.tags).map(([k, v]) => `${k}="${v}"`);
      lines.push(`${s.family}${tags.length ? `{${tags.join(',')}}` : ''} ${s.value}`);
    }
    return `${lines.join('\n')}\n`;
  };

  // ---- admin ----

  const serverState = () => (healthFailed ? 'DRAINING' : 'LIVE');

  const handleAdmin = (req: http.IncomingMessage, url: URL): { status: number; body: string; type?: string } => {
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const p = url.searchParams;
    if (MUTATING.has(path) && method !== 'POST') return { status: 405, body: `Method ${method} not allowed, POST required.` };
    switch (path) {
      case '/ready':
        return { status: healthFailed ? 503 : 200, body: `${serverState()}\n` };
      case '/server_info':
        return {
          status: 200,
          type: 'application/json',
          body: `${JSON.stringify(
            {
              version: `standin/${version}/Clean/RELEASE/BoringSSL`,
              state: serverState(),
              hot_restart_version: 'disabled',
              command_line_options: { drain_time_s: `${drainTimeMs / 1000}s`, drain_strategy: 'Immediate' },
              uptime_current_epoch: `${Math.floor((Date.now() - startedAt) / 1000)}s`,
              uptime_all_epochs: `${Math.floor((Date.now() - startedAt) / 1000)}s`,
              node: { id: 'router~10.0.0.1~istio-ingressgateway-standin.istio-system~istio-system.svc.cluster.local' },
            },
            null,
            2,
          )}\n`,
        };
      case '/stats': {
        const list = selectStats(p);
        if (typeof list === 'string') return { status: 400, body: list };
        if (p.get('format') === 'json')
          return {
            status: 200,
            type: 'application/json',
            body: JSON.stringify({
              stats: [
                ...list.map((s) => ({ name: s.name, value: s.value })),
                { histograms: { supported_quantiles: [0, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 100], computed_quantiles: [] } },
              ],
            }),
          };
        return { status: 200, body: statsAsText(list) };
      }
      case '/stats/prometheus': {
        const list = selectStats(p);
        if (typeof list === 'string') return { status: 400, body: list };
        return { status: 200, type: 'text/plain; version=0.0.4', body: prometheus(list) };
      }
      case '/drain_listeners': {
        const graceful = p.has('graceful');
        const skipExit = p.has('skip_exit');
        const inboundOnly = p.has('inboundonly');
        const guard = plainNotifies;
        if (skipExit && !graceful && !guard) return { status: 400, body: 'skip_exit requires graceful\n' };
        if (graceful) {
          const duplicate = drainedAll || (inboundOnly && drainedInbound);
          if (duplicate) return { status: 200, body: 'OK\n' };
          if (inboundOnly) drainedInbound = true;
          else drainedAll = true;
          if (!inboundOnly) {
            startDrain();
            if (!skipExit) later(drainTimeMs, stopListeners);
          }
        } else {
          if (guard && !inboundOnly) startDrain();
          if (!skipExit && !inboundOnly) stopListeners();
        }
        return { status: 200, body: 'OK\n' };
      }
      case '/healthcheck/fail':
        healthFailed = true;
        return { status: 200, body: 'OK\n' };
      case '/healthcheck/ok':
        healthFailed = false;
        return { status: 200, body: 'OK\n' };
      default:
        return {
          status: 404,
          body: 'invalid path. admin commands are:\n  /drain_listeners\n  /healthcheck/fail\n  /healthcheck/ok\n  /ready\n  /server_info\n  /stats\n  /stats/prometheus\n',
        };
    }
  };

  const standin: { current?: EnvoyStandin } = {};
  const handleStandin = async (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => {
    if (url.pathname === '/standin/counts') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...standin.current!.counts(), adminCalls }));
      return;
    }
    if (url.pathname === '/standin/fault' && req.method === 'POST') {
      const mode = (url.searchParams.get('mode') ?? 'none') as AdminFault;
      const delayMs = Number(url.searchParams.get('delayMs') ?? '5000');
      const forMs = Number(url.searchParams.get('forMs') ?? '0');
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('OK\n');
      await standin.current!.setFault(mode, { delayMs });
      if (forMs > 0) later(forMs, () => void standin.current!.setFault('none'));
      return;
    }
    res.writeHead(404);
    res.end();
  };

  const admin = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://admin');
    req.resume();
    if (url.pathname.startsWith('/standin/')) {
      void handleStandin(req, res, url);
      return;
    }
    adminRequests++;
    let counted = true;
    const uncount = () => {
      if (counted) adminRequests--;
      counted = false;
    };
    res.on('close', uncount);
    res.on('finish', uncount);
    const respond = () => {
      if (res.destroyed) return;
      if (fault === 'garbage') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(GARBAGE);
        adminCalls.push({ method: req.method ?? 'GET', path: req.url ?? '/', at: Date.now(), status: 200 });
        return;
      }
      const answer = handleAdmin(req, url);
      adminCalls.push({ method: req.method ?? 'GET', path: req.url ?? '/', at: Date.now(), status: answer.status });
      res.writeHead(answer.status, { 'content-type': answer.type ?? 'text/plain; charset=UTF-8', server: 'envoy' });
      res.end(answer.body);
    };
    if (fault === 'slow') later(faultDelayMs, respond);
    else respond();
  });
  admin.on('connection', (socket) => {
    adminSockets.add(socket);
    socket.on('close', () => adminSockets.delete(socket));
  });

  const listenOn = (server: net.Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port, host }, () => {
        server.off('error', reject);
        resolve((server.address() as net.AddressInfo).port);
      });
    });

  const listenPort = await listenOn(httpListener, options.listenPort ?? 0);
  const adminPort = await listenOn(admin, options.adminPort ?? 0);
  const tcpPort = options.tcpPort !== undefined ? await listenOn(tcpListener, options.tcpPort) : undefined;
  let adminUp = true;

  const api: EnvoyStandin = {
    host,
    listenPort,
    adminPort,
    tcpPort,
    adminUrl: `http://${host}:${adminPort}`,
    trafficUrl: `http://${host}:${listenPort}`,
    adminCalls,
    counts: () => ({
      connections: httpSockets.size,
      requests,
      tcpConnections: tcpSockets.size,
      requestsTotal,
      listening,
      draining,
      healthFailed,
      zeroSince,
    }),
    statsText: (o = {}) => {
      adminRequests++;
      try {
        const params = new URLSearchParams();
        if (o.filter !== undefined) params.set('filter', o.filter);
        if (o.usedonly) params.set('usedonly', '');
        const list = selectStats(params);
        return typeof list === 'string' ? list : statsAsText(list);
      } finally {
        adminRequests--;
      }
    },
    async setFault(mode, o = {}) {
      fault = mode;
      faultDelayMs = o.delayMs ?? 5000;
      if (mode === 'down' && adminUp) {
        adminUp = false;
        await new Promise<void>((resolve) => {
          admin.close(() => resolve());
          admin.closeAllConnections();
        });
      } else if (mode !== 'down' && !adminUp && !stopped) {
        await listenOn(admin, adminPort);
        adminUp = true;
      }
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of h2Sessions) s.destroy();
      for (const s of [...httpSockets.keys(), ...tcpSockets.keys()]) s.destroy();
      const close = (server: net.Server) => new Promise<void>((resolve) => server.close(() => resolve()));
      const closing: Promise<void>[] = [];
      if (listening) closing.push(close(httpListener));
      if (listening && tcpPort !== undefined) closing.push(close(tcpListener));
      if (adminUp) {
        closing.push(close(admin));
        admin.closeAllConnections();
      }
      await Promise.all(closing);
    },
  };
  standin.current = api;
  return api;
}

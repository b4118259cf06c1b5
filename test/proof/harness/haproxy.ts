/**
 * A real HAProxy (Debian's package) in the foreground on loopback: the harness wraps the backend
 * section that `gracegate lb-config` generated in a global/defaults/frontend of its own, and reads
 * HAProxy's own view through the stats socket (`show stat`), its state-change lines (stderr, each
 * with HAProxy's own timestamp) and its
 * per-request httplog lines (stdout), which say how HAProxy ended every request a client saw fail.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { FrontLb, LbCounters } from './front-lb';
import { freePort, Proc, startDaemon, waitFor } from './proc';
import { CLIENT_PORT_HEADER } from '../../support/stream-end-log';

export type ServerStat = {
  name: string;
  status: string;
  /** Connection errors: connects to this server that failed (refused, timed out). */
  econ: number;
  /** Response errors: the server closed or broke a response. */
  eresp: number;
  /** Connection retries. */
  wretr: number;
  /** Redispatches to another server. */
  wredis: number;
  /** Current and total sessions. */
  scur: number;
  stot: number;
  /** Sessions HAProxy aborted on the server side (killed by on-marked-down shutdown-sessions count here). */
  srvAbrt: number;
  hrsp5xx: number;
};

export type ServerEvent = { atMs: number; server: string; state: 'DOWN' | 'UP' | 'NOLB'; sessionsActive: number; line: string };

/**
 * One request as HAProxy logged it (option httplog, to stdout). `atMs` is when the line reached
 * the harness; `startMs`/`endMs` are HAProxy's own clock: the request's date (`%tr`, first byte of
 * the request) and that plus `%Ta` (last byte of the response sent). `clientPort` is the client's
 * source port (how a failed request is matched to its connection).
 */
export type RequestLogLine = {
  atMs: number;
  text: string;
  clientPort: number;
  server: string;
  status: number;
  terminationState: string;
  startMs: number;
  endMs: number;
  /**
   * HAProxy's `%Tr`: from the request sent to the server to the response's headers read back (-1:
   * none), and the request's path; HAProxy's lines only (the front Envoy's log gives neither).
   */
  serverMs?: number;
  path?: string;
  /**
   * HAProxy's `%Tc` (the connect to the server that carried the request; -1: none) and `%rc` (the
   * connect retries; `redispatched` when the `+` says the last one went to another server).
   */
  connectMs?: number;
  retries?: number;
  redispatched?: boolean;
};

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * HAProxy's default httplog format (configuration manual 8.2.3):
 * `%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc …`; `%tr` is local time with
 * milliseconds, `%Ta` may carry a `+` when the log was emitted before the end (option logasap).
 */
const HTTPLOG =
  /^\S+:(\d+) \[(\d{2})\/(\w{3})\/(\d{4}):(\d{2}):(\d{2}):(\d{2})\.(\d{3})\] \S+ [^/\s]+\/(\S+) -?\d+\/-?\d+\/(-?\d+)\/(-?\d+)\/\+?(-?\d+) (-?\d+) \+?-?\d+ \S+ \S+ ([A-Za-z-]{4}) (?:\d+\/\d+\/\d+\/\d+\/(\+?)(\d+) )?.*?(?:"\S+ (\S+) [^"]*")?$/;

/** Parses one httplog line; null for anything else (state changes, warnings). */
export function parseHttplog(line: string, atMs: number): RequestLogLine | null {
  const m = HTTPLOG.exec(line);
  if (!m) return null;
  const [, port, day, mon, year, h, min, sec, ms, server, tc, tr, ta, status, state, redispatched, retries, path] = m;
  const month = MONTHS.indexOf(mon!);
  if (month < 0) return null;
  const startMs = new Date(Number(year), month, Number(day), Number(h), Number(min), Number(sec), Number(ms)).getTime();
  return {
    atMs,
    text: line,
    clientPort: Number(port),
    server: server!,
    status: Number(status),
    terminationState: state!,
    startMs,
    endMs: startMs + Math.max(0, Number(ta)),
    serverMs: Number(tr),
    connectMs: Number(tc),
    ...(retries === undefined ? {} : { retries: Number(retries), redispatched: redispatched === '+' }),
    ...(path === undefined ? {} : { path }),
  };
}

/**
 * How late, at most, HAProxy read a response the pod had already sent, as the same run measured it:
 * for every `/slow?ms=X` request HAProxy logged as served by `server`, its `%Tr` (request sent to
 * response read) less the X ms the app was asked to wait is every hop's delay added up, HAProxy's
 * own wake-up to read the response among them. A few ms on a quiet machine; tens under load, when
 * the end HAProxy logs trails the moment the pod's in-flight count fell to 0 by that much.
 */
export function relaySlackMs(log: readonly RequestLogLine[], server: string): number {
  let slack = 0;
  for (const l of log) {
    const asked = l.server === server && l.serverMs !== undefined && l.serverMs >= 0 ? /^\/slow\?ms=(\d+)$/.exec(l.path ?? '') : null;
    if (asked) slack = Math.max(slack, l.serverMs! - Number(asked[1]));
  }
  return slack;
}

/**
 * The termination state of an HAProxy httplog line: the 4-character field after the byte count
 * (`----` for a normal end; the first letter says who ended it, the second at which phase: "Session
 * state at disconnection" in HAProxy's configuration manual). Null for any other line.
 */
export function httplogTerminationState(line: string): string | null {
  return parseHttplog(line, 0)?.terminationState ?? null;
}

export function parseStatCsv(csv: string, backend: string): { servers: ServerStat[]; backend: ServerStat | undefined } {
  const lines = csv.split('\n').filter((l) => l.trim() !== '');
  const head = lines[0]!.replace(/^# /, '').split(',');
  const col = (row: string[], name: string): string => row[head.indexOf(name)] ?? '';
  const num = (row: string[], name: string): number => Number(col(row, name) || 0);
  const rows = lines
    .slice(1)
    .map((l) => l.split(','))
    .filter((r) => col(r, 'pxname') === backend);
  const toStat = (r: string[]): ServerStat => ({
    name: col(r, 'svname'),
    status: col(r, 'status'),
    econ: num(r, 'econ'),
    eresp: num(r, 'eresp'),
    wretr: num(r, 'wretr'),
    wredis: num(r, 'wredis'),
    scur: num(r, 'scur'),
    stot: num(r, 'stot'),
    srvAbrt: num(r, 'srv_abrt'),
    hrsp5xx: num(r, 'hrsp_5xx'),
  });
  return {
    servers: rows.filter((r) => col(r, 'svname') !== 'BACKEND').map(toStat),
    backend: rows.filter((r) => col(r, 'svname') === 'BACKEND').map(toStat)[0],
  };
}

const STATE_LINE = /Server ([^/\s]+)\/(\S+) is (DOWN|UP|stopping)\b.*?(?:(\d+) sessions active)?/;
/**
 * A line of the wrappers' second log target (haproxyGlobal: `log stderr format iso … notice`): the
 * state changes again, each behind HAProxy's own timestamp (microseconds, with its offset). The
 * `[WARNING]` copy HAProxy prints in the foreground carries none, so its time would be when the line
 * reached the harness: on a loaded machine, hundreds of ms after HAProxy acted (a cluster session
 * once read 'CLOSED before DOWN' from such a late receipt). Only the stamped copy makes events.
 */
const ISO_STAMPED = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+(?:Z|[+-]\d{2}:\d{2})) (.*)$/;

/**
 * A state change in one of HAProxy's stamped lines, at HAProxy's own time; null for any other line
 * (the unstamped foreground copy included).
 */
export function parseStateLine(line: string): { atMs: number; backend: string; server: string; state: ServerEvent['state']; sessionsActive: number } | null {
  const stamped = ISO_STAMPED.exec(line);
  if (!stamped) return null;
  const m = STATE_LINE.exec(stamped[2]!);
  const atMs = Date.parse(stamped[1]!);
  if (!m || Number.isNaN(atMs)) return null;
  const sessions = /(\d+) sessions active/.exec(stamped[2]!);
  return {
    atMs,
    backend: m[1]!,
    server: m[2]!,
    state: m[3] === 'stopping' ? 'NOLB' : (m[3] as 'DOWN' | 'UP'),
    sessionsActive: sessions ? Number(sessions[1]) : 0,
  };
}

/**
 * HAProxy stands for the LB, a device of its own with its own CPU; here it shares two cores with
 * the pods under test (and, on the cluster, with three nodes and a control plane). Niced above them,
 * its checks keep their configured clock (inter, fall) however busy the pods are, as on a real
 * device; what the tests judge is the pods' side. A process not allowed to raise its priority
 * (not root) runs at its inherited one: GNU nice warns and runs the command anyway.
 */
export const LB_PRIORITY: readonly string[] = ['nice', '-n', '-10'];

/** `haproxy -v`'s first line, shortened: `HAProxy 2.6.12-1+deb12u4`. */
export function haproxyVersion(): string {
  const line = spawnSync('haproxy', ['-v'], { encoding: 'utf8' }).stdout.split('\n')[0] ?? '';
  const version = /HAProxy version (\S+)/.exec(line)?.[1];
  return version ? `HAProxy ${version}` : line.trim();
}

/** A stats-socket command that got no answer within its time. */
class StatsSocketTimeout extends Error {
  constructor(readonly cmd: string) {
    super(`stats socket: '${cmd}' timed out`);
  }
}

/** One ask on an HAProxy stats socket; the socket answers and closes. */
function askStatsSocket(socketPath: string, cmd: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(socketPath);
    let out = '';
    const timer = setTimeout(() => sock.destroy(new StatsSocketTimeout(cmd)), timeoutMs);
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(`${cmd}\n`));
    sock.on('data', (c: string) => {
      out += c;
    });
    sock.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

/**
 * One command on an HAProxy stats socket; the socket answers and closes. A read (`show …`) that
 * times out is asked once more with the same time: a CI run of 6 December lost a delivery path to
 * one 2 s timeout of `show stat` while the cluster's lanes started, with HAProxy itself serving on.
 * Any other error, a second timeout, or a timed-out command that changes state fails at once.
 */
export async function statsSocketCommand(socketPath: string, cmd: string, timeoutMs = 2000): Promise<string> {
  try {
    return await askStatsSocket(socketPath, cmd, timeoutMs);
  } catch (err) {
    if (!(err instanceof StatsSocketTimeout) || !cmd.startsWith('show ')) throw err;
    return askStatsSocket(socketPath, cmd, timeoutMs);
  }
}

/**
 * The wrappers' `global` section (the harness's and the load's): the admin stats socket, one
 * thread, `extra` lines, request log lines to stdout.
 */
export function haproxyGlobal(socketPath: string, extra: readonly string[] = []): string[] {
  return [
    'global',
    `    stats socket ${socketPath} level admin`,
    '    nbthread 1',
    ...extra,
    '    log stdout format raw local0 info',
    // State changes (notice and above; request lines are info) once more, with HAProxy's own time.
    '    log stderr format iso local1 notice',
  ];
}

/** The lab's `timeout connect`: a connect the node drops (its SYN unanswered) fails after this. */
export const HAPROXY_CONNECT_TIMEOUT_MS = 1000;

/** The wrappers' `defaults` section (the harness's and the load's): HTTP mode, httplog, lab timeouts. */
export const HAPROXY_DEFAULTS = [
  'defaults',
  '    mode http',
  '    log global',
  '    option httplog',
  `    timeout connect ${HAPROXY_CONNECT_TIMEOUT_MS / 1000}s`,
  '    timeout client 30s',
  '    timeout server 30s',
  '    timeout http-keep-alive 10s',
] as const;

/**
 * `haproxy -db -f FILE`, once its stats socket answers; stopped again if it never does. `prefix`
 * runs it through another command (the cluster's `nsenter --net=…`: HAProxy inside a namespace).
 */
export function startHaproxyProcess(label: string, file: string, socketPath: string, prefix: readonly string[] = []): Promise<Proc> {
  return startDaemon(
    label,
    [...LB_PRIORITY, ...prefix, 'haproxy', '-db', '-f', file],
    async () => (await statsSocketCommand(socketPath, 'show info')).includes('Name: HAProxy'),
    {
      withinMs: 10_000,
      everyMs: 25,
    },
  );
}

export class Haproxy implements FrontLb {
  readonly kind = 'haproxy';
  readonly events: ServerEvent[] = [];
  readonly version = haproxyVersion();
  readonly requestLog: RequestLogLine[] = [];
  private constructor(
    readonly proc: Proc,
    readonly port: number,
    readonly socketPath: string,
    readonly backendName: string,
    readonly configText: string,
  ) {
    proc.onLine((line) => {
      if (line.stream === 'stdout') {
        const logged = parseHttplog(line.text, line.atMs);
        if (logged) this.requestLog.push(logged);
        return;
      }
      const e = parseStateLine(line.text);
      if (!e || e.backend !== backendName) return;
      this.events.push({ atMs: e.atMs, server: e.server, state: e.state, sessionsActive: e.sessionsActive, line: line.text });
    });
  }

  /**
   * Starts HAProxy with `backendSection` (generated, untouched) behind a frontend on a free
   * loopback port. The wrapper's timeouts are sane for a lab; the backend's own settings win.
   */
  static async start(
    dir: string,
    backendSection: string,
    backendName: string,
    where: { prefix: readonly string[]; bind: string; port: number } | null = null,
  ): Promise<Haproxy> {
    const port = where?.port ?? (await freePort());
    const socketPath = join(dir, 'haproxy.sock');
    const config = [
      '# harness wrapper (test/proof/harness/haproxy.ts); the backend below is gracegate lb-config output',
      ...haproxyGlobal(socketPath),
      ...HAPROXY_DEFAULTS,
      'frontend e2e',
      `    bind ${where?.bind ?? '127.0.0.1'}:${port}`,
      // Which client connection each request came on, for the pods' Envoy logs (test/support/stream-end-log.ts).
      `    http-request set-header ${CLIENT_PORT_HEADER} %[src_port]`,
      `    default_backend ${backendName}`,
      '',
      backendSection,
    ].join('\n');
    const file = join(dir, 'haproxy.cfg');
    writeFileSync(file, config);
    const proc = await startHaproxyProcess('haproxy', file, socketPath, where?.prefix);
    return new Haproxy(proc, port, socketPath, backendName, config);
  }

  /** One stats-socket command; the socket answers and closes. */
  command(cmd: string, timeoutMs = 2000): Promise<string> {
    return statsSocketCommand(this.socketPath, cmd, timeoutMs);
  }

  async stats(): Promise<{ servers: ServerStat[]; backend: ServerStat | undefined }> {
    return parseStatCsv(await this.command('show stat'), this.backendName);
  }

  async counters(): Promise<LbCounters> {
    const { servers, backend } = await this.stats();
    const sum = (f: (s: ServerStat) => number): number => servers.reduce((n, s) => n + f(s), 0);
    return {
      econ: sum((s) => s.econ),
      eresp: sum((s) => s.eresp),
      wretr: sum((s) => s.wretr),
      wredis: sum((s) => s.wredis),
      srvAbrt: sum((s) => s.srvAbrt),
      hrsp5xx: backend?.hrsp5xx ?? 0,
    };
  }

  async waitStatus(server: string, status: RegExp, timeoutMs: number): Promise<void> {
    await waitFor(
      `HAProxy server ${server} ${status}`,
      timeoutMs,
      async () => {
        const s = (await this.stats()).servers.find((x) => x.name === server);
        return s && status.test(s.status) ? true : undefined;
      },
      50,
    );
  }

  async stop(): Promise<void> {
    await this.proc.stop(2000);
  }
}

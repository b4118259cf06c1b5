/**
 * The load scenario's HAProxy: `gracegate lb-config`'s backend, untouched but for `proto h2` on its
 * server lines when the LB speaks HTTP/2 to the pods, behind a frontend of the harness's own that
 * captures the client's x-request-id into every httplog line and puts it on every answer, HAProxy's
 * own errors included (so a client matches a 503 to what it sent). The request log goes to a file,
 * not a pipe: at thousands of requests a second a pipe read late would make HAProxy drop log lines,
 * and each line is the LB's witness of one request.
 */
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  HAPROXY_DEFAULTS,
  haproxyGlobal,
  haproxyVersion,
  parseHttplog,
  parseStatCsv,
  statsSocketCommand,
  type RequestLogLine,
  type ServerStat,
} from '../harness/haproxy';
import { freePort, type Proc, startDaemon, waitFor } from '../harness/proc';

export type LbStateEvent = { atMs: number; server: string; state: 'DOWN' | 'UP' | 'NOLB'; line: string };
export type LbLogLine = RequestLogLine & { id: string };

const STATE_LINE = /Server ([^/\s]+)\/(\S+) is (DOWN|UP|stopping)\b/;

/** Adds `proto h2` to every server line of lb-config's backend (HTTP/2 from the LB to the pods, h2c); its checks stay HTTP/1.1 (`check-proto h1`: the hc answers HTTP/1.1). */
export function withH2Servers(backend: string): string {
  return backend.replace(/^(\s*server \S+ \S+)/gm, '$1 proto h2 check-proto h1');
}

export class LoadHaproxy {
  readonly events: LbStateEvent[] = [];
  readonly version = haproxyVersion();

  private constructor(
    private readonly proc: Proc,
    readonly port: number,
    readonly h2Port: number,
    readonly socketPath: string,
    readonly logFile: string,
    readonly backendName: string,
    readonly configText: string,
  ) {
    proc.onLine((line) => {
      const m = line.stream === 'stderr' ? STATE_LINE.exec(line.text) : null;
      if (!m || m[1] !== backendName) return;
      this.events.push({ atMs: line.atMs, server: m[2]!, state: m[3] === 'stopping' ? 'NOLB' : (m[3] as 'DOWN' | 'UP'), line: line.text });
    });
  }

  /** `backendSection` is lb-config's output (already with `proto h2` when wanted). */
  static async start(dir: string, backendSection: string, backendName: string): Promise<LoadHaproxy> {
    const port = await freePort();
    const h2Port = await freePort();
    const socketPath = join(dir, 'haproxy.sock');
    const logFile = join(dir, 'haproxy-requests.log');
    const config = [
      '# load harness wrapper (test/proof/load/lb.ts); the backend below is gracegate lb-config output',
      ...haproxyGlobal(socketPath, ['    maxconn 8000']),
      ...HAPROXY_DEFAULTS,
      'frontend load',
      `    bind 127.0.0.1:${port}`,
      `    bind 127.0.0.1:${h2Port} proto h2`,
      '    http-request capture req.hdr(x-request-id) len 48',
      '    http-request set-var(txn.rid) req.hdr(x-request-id)',
      '    http-after-response set-header x-request-id %[var(txn.rid)]',
      `    default_backend ${backendName}`,
      '',
      backendSection,
    ].join('\n');
    const file = join(dir, 'haproxy.cfg');
    writeFileSync(file, config);
    const fd = openSync(logFile, 'w');
    let proc: Proc;
    try {
      proc = await startDaemon(
        'haproxy',
        ['haproxy', '-db', '-f', file],
        async () => (await statsSocketCommand(socketPath, 'show info')).includes('Name: HAProxy'),
        {
          withinMs: 10_000,
          stdoutFd: fd,
          everyMs: 25,
        },
      );
    } finally {
      closeSync(fd);
    }
    const lb = new LoadHaproxy(proc, port, h2Port, socketPath, logFile, backendName, config);
    return lb;
  }

  command(cmd: string, timeoutMs = 2000): Promise<string> {
    return statsSocketCommand(this.socketPath, cmd, timeoutMs);
  }

  async servers(): Promise<ServerStat[]> {
    return parseStatCsv(await this.command('show stat'), this.backendName).servers;
  }

  async waitStatus(server: string, status: RegExp, timeoutMs: number): Promise<void> {
    await waitFor(
      `HAProxy server ${server} ${status}`,
      timeoutMs,
      async () => ((await this.servers()).find((s) => s.name === server && status.test(s.status)) ? true : undefined),
      50,
    );
  }

  /** Every request HAProxy logged so far, with the client's x-request-id (`-` when it sent none). */
  requestLog(): LbLogLine[] {
    const out: LbLogLine[] = [];
    for (const text of readFileSync(this.logFile, 'utf8').split('\n')) {
      const l = parseHttplog(text, 0);
      if (!l) continue;
      out.push({ ...l, id: /\{([^}|]*)\}/.exec(text)?.[1] ?? '-' });
    }
    return out;
  }

  async stop(): Promise<void> {
    await this.proc.stop(2000);
  }
}

/**
 * A real HAProxy (Debian's package) as the LB in front of one leaving gateway pod and one peer,
 * probing each pod's hc health port, for the observability end-to-end test. Test support.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Proc, startDaemon } from './daemon';
import { freePort } from './real-envoy';

export interface LbServer {
  readonly name: string;
  /** Where traffic goes (the pod's Envoy, or the peer's app). */
  readonly trafficPort: number;
  /** The hc health port the LB probes /health_check.html on. */
  readonly healthPort: number;
}

export interface HaproxyOptions {
  readonly servers: readonly LbServer[];
  /** `on-marked-down shutdown-sessions`: DOWN kills the server's live sessions. */
  readonly shutdownSessions: boolean;
  /** Probe interval, ms (fall 2). */
  readonly interMs: number;
}

export interface Haproxy {
  readonly url: string;
  logs(): string;
  /** Whether HAProxy has logged the server going DOWN (after `fall` failed probes). */
  markedDown(server: string): boolean;
  stop(): Promise<void>;
}

export async function startHaproxy(options: HaproxyOptions): Promise<Haproxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gracegate-obs-haproxy-'));
  const port = await freePort();
  const config = [
    'global',
    '  log stderr format raw local0 info',
    'defaults',
    '  mode http',
    '  log global',
    '  timeout connect 1s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  retries 3',
    '  option redispatch',
    // No server-side keep-alive: each request is its own connection, so the pod's connection count
    // falls to 0 when its requests end (pooled idle connections would hold it up: docs/alerts.md).
    '  option http-server-close',
    'frontend fe',
    `  bind 127.0.0.1:${port}`,
    '  default_backend be',
    'backend be',
    '  option httpchk GET /health_check.html',
    `  default-server inter ${options.interMs} fall 2 rise 1${options.shutdownSessions ? ' on-marked-down shutdown-sessions' : ''}`,
    ...options.servers.map((s) => `  server ${s.name} 127.0.0.1:${s.trafficPort} check port ${s.healthPort}`),
    '',
  ].join('\n');
  const file = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(file, config);
  let proc: Proc;
  try {
    proc = await startDaemon(
      'haproxy',
      ['haproxy', '-db', '-f', file],
      () =>
        new Promise<boolean>((resolve) => {
          const s = net.connect(port, '127.0.0.1', () => {
            s.destroy();
            resolve(true);
          });
          s.on('error', () => resolve(false));
        }),
      { withinMs: 10_000 },
    );
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const log = () => proc.stderrText();
  const stop = async () => {
    await proc.stop(5000);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { url: `http://127.0.0.1:${port}`, logs: log, markedDown: (server) => log().includes(`Server be/${server} is DOWN`), stop };
}

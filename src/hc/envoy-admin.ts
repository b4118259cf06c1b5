/**
 * The Envoy admin adapter: the few admin calls the sidecar makes, each with a timeout
 * (AbortSignal.timeout) and a size cap, and each rejecting on anything but the expected answer.
 */
import * as http from 'node:http';
import { compileCounting, parseStatsTextInSlices, type CountingRules } from './envoy-stats';
import type { EnvoyPort, EnvoyServerState } from './types';

export class EnvoyAdminError extends Error {}

/**
 * Largest admin answer read. `/stats` is asked with a `filter`, so Envoy sends only the candidate
 * lines: a few per listener and HTTP connection manager (a gateway with a thousand listeners is
 * under 200 KiB). Anything bigger is refused as garbage rather than parsed.
 */
export const MAX_BODY_BYTES = 1024 * 1024;
const SERVER_STATES: readonly EnvoyServerState[] = ['LIVE', 'DRAINING', 'PRE_INITIALIZING', 'INITIALIZING'];

export interface EnvoyAdminOptions {
  /** e.g. http://127.0.0.1:15000 */
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly counting: CountingRules;
}

interface AdminResponse {
  readonly status: number;
  readonly body: string;
}

/** One admin request on its own connection (no pooling: a poll never waits behind another). */
export function adminRequest(baseUrl: string, method: 'GET' | 'POST', path: string, timeoutMs: number): Promise<AdminResponse> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => {
      const message = err.name === 'TimeoutError' || err.name === 'AbortError' ? `no answer within ${timeoutMs}ms` : err.message;
      reject(new EnvoyAdminError(`${method} ${url.pathname}: ${message}`));
    };
    const req = http.request(url, { method, agent: false, signal: AbortSignal.timeout(timeoutMs), headers: { connection: 'close' } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          res.destroy();
          fail(new Error(`answer larger than ${MAX_BODY_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

export function createEnvoyAdmin(options: EnvoyAdminOptions): EnvoyPort {
  const counter = compileCounting(options.counting);
  // No `usedonly`: a listener that never had a connection must still show its 0, since a count
  // without any counted line is refused (envoy-stats.ts).
  const statsPath = `/stats?filter=${encodeURIComponent(counter.filter)}`;
  const call = (method: 'GET' | 'POST', path: string) => adminRequest(options.baseUrl, method, path, options.timeoutMs);
  const expectOk = async (path: string) => {
    const res = await call('POST', path);
    if (res.status !== 200) throw new EnvoyAdminError(`POST ${path}: HTTP ${res.status} ${res.body.trim().slice(0, 120)}`);
  };

  return {
    async serverState() {
      const res = await call('GET', '/ready');
      const state = res.body.trim() as EnvoyServerState;
      if (!SERVER_STATES.includes(state) || (res.status === 200) !== (state === 'LIVE')) {
        throw new EnvoyAdminError(`GET /ready: unexpected answer HTTP ${res.status} ${JSON.stringify(res.body.slice(0, 80))}`);
      }
      return state;
    },
    async inFlight() {
      const res = await call('GET', statsPath);
      if (res.status !== 200) throw new EnvoyAdminError(`GET /stats: HTTP ${res.status} ${res.body.trim().slice(0, 120)}`);
      try {
        return counter.count(await parseStatsTextInSlices(res.body)).total;
      } catch (err) {
        throw new EnvoyAdminError(`GET /stats: ${(err as Error).message}`);
      }
    },
    async drainListeners() {
      // graceful starts the drain sequence (Connection: close / GOAWAY, idle connections closed) and
      // would keep accepting for --drain-time-s; the plain call right after stops the listeners.
      await expectOk('/drain_listeners?graceful');
      await expectOk('/drain_listeners');
    },
  };
}

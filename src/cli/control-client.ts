/**
 * The CLI's client of the local hc sidecar's control port (127.0.0.1): `gracegate drain` starts the
 * sequence and polls `/state` with it, `gracegate state` prints `/state`. Every call is bounded in
 * time and in the size of the answer. The answer crossed a socket, so its fields are typed
 * `Partial`: a caller checks what it reads (a stranger on the port must not make a command misbehave).
 */
import * as http from 'node:http';
import { CONTROL_HOST, STATE_BODY_MAX_BYTES } from '../contract/hc';

export interface ControlReply<B> {
  status: number;
  json: Partial<B>;
}

/** One request to the sidecar at CONTROL_HOST:port; rejects on a transport error, an answer over `maxBytes`, or one that is not JSON. */
export function controlCall<B>(
  port: number,
  method: 'GET' | 'POST',
  path: string,
  timeoutMs: number,
  maxBytes = STATE_BODY_MAX_BYTES,
): Promise<ControlReply<B>> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: CONTROL_HOST, port, method, path, agent: false, signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) {
          req.destroy(new Error(`${method} ${path}: answer larger than ${maxBytes / 1024} KiB`));
          return;
        }
        chunks.push(c);
      });
      res.on('error', reject);
      res.on('end', () => {
        try {
          const json: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          resolve({ status: res.statusCode ?? 0, json: typeof json === 'object' && json !== null ? (json as Partial<B>) : {} });
        } catch {
          reject(new Error(`${method} ${path}: HTTP ${res.statusCode}, not JSON`));
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Small HTTP helpers for the harness's own control calls (never for the measured traffic). */
import { request } from 'node:http';

export type SimpleResponse = { status: number; body: string };

/** One request on a fresh connection, bounded by `timeoutMs` (and `signal`, when given). */
export function httpCall(method: string, url: string, timeoutMs = 2000, signal?: AbortSignal): Promise<SimpleResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: false, headers: { connection: 'close' }, ...(signal ? { signal } : {}) }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (c: string) => {
          body += c;
        })
        .on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${url}: no answer in ${timeoutMs} ms`)));
    // Say which call failed: a bare "connect ECONNREFUSED" names a port, not the step of the run.
    req.on('error', (err: NodeJS.ErrnoException) =>
      reject(Object.assign(new Error(err.message.startsWith(method) ? err.message : `${method} ${url}: ${err.message}`), { code: err.code })),
    );
    req.end();
  });
}

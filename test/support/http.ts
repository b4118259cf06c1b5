/** One HTTP call with a hard timeout, for the rigs and tests that talk to a sidecar, an Envoy or an app. */
import * as http from 'node:http';

export interface Reply {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** One HTTP request with a hard timeout; rejects with the socket error (e.g. ECONNREFUSED). */
export function request(
  url: string,
  options: {
    method?: string;
    headers?: http.OutgoingHttpHeaders;
    body?: string;
    timeoutMs?: number;
    agent?: http.Agent | false;
    /** The caller's address (another loopback address plays a caller from elsewhere). */
    localAddress?: string;
  } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: options.agent ?? false,
        signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
        ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

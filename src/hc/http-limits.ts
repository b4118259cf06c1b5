/**
 * What every sidecar server shares: one request per connection at a time, bounded timeouts and
 * sizes, no request bodies, and plain answers. A probe is answered from memory, so every limit can
 * be tight.
 */
import * as http from 'node:http';
import { admitConnections, type Admission, type AdmissionLimits } from './connection-admission';

export const LIMITS = {
  /**
   * The whole header block must arrive within this (slowloris). An LB's or the kubelet's probe
   * sends its request in one packet right after connecting; 2 s leaves room for one lost packet
   * (TCP's initial retransmission timeout is 1 s, RFC 6298).
   */
  headersTimeoutMs: 2_000,
  /** The whole request (there is no body) must arrive within this. Responses may take longer (/wait-closed). */
  requestTimeoutMs: 3_000,
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: 5_000,
  /** How often Node checks the two timeouts above (its default, 30 s, would make them 30 s late). */
  connectionsCheckingIntervalMs: 1_000,
  maxHeaderSize: 8 * 1024,
  /**
   * Headers a request may carry; more is refused (431). Counted by the sidecar, not left to Node's
   * `maxHeadersCount`, which drops the extra headers silently: a Transfer-Encoding as the 33rd
   * header went unseen, so the body check passed and Node read the whole body.
   * maxHeaderSize bounds what the parser holds meanwhile.
   */
  maxHeadersCount: 32,
  /**
   * Requests one keep-alive connection carries; the last is answered with `Connection: close`
   * (Node's `maxRequestsPerSocket`). An LB that keeps its connection probes once a second or so:
   * it reconnects every couple of minutes, and nobody holds a connection for good.
   */
  maxRequestsPerConnection: 100,
} as const;

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export function createBoundedServer(limits: AdmissionLimits, handler: Handler): http.Server {
  let admission: Admission | undefined;
  const server = http.createServer(
    {
      maxHeaderSize: LIMITS.maxHeaderSize,
      requestTimeout: LIMITS.requestTimeoutMs,
      connectionsCheckingInterval: LIMITS.connectionsCheckingIntervalMs,
      // Node >= 20 answers 400 to an HTTP/1.1 request without Host, and LB monitors send exactly
      // that unless told otherwise (NetScaler's HTTP monitor with only -httpRequest, custom
      // probes): every member would stay DOWN. Nothing here routes by host (pathOf ignores it).
      requireHostHeader: false,
    },
    (req, res) => {
      // One request per connection at a time (connection-admission.ts): a pipelined one closes it.
      if (admission && !admission.take(req, res)) return;
      if (rejectsHeaders(req, res) || rejectsBody(req, res)) return;
      // A throw in a request handler is an uncaught exception that ends the process: the LB's
      // probes would then see a closed port. Answer 500 and keep serving.
      try {
        handler(req, res);
      } catch (err) {
        if (!res.headersSent && !res.destroyed) send(res, 500, `internal error: ${(err as Error).message}\n`, { connection: 'close' });
        else res.destroy();
      }
    },
  );
  server.headersTimeout = LIMITS.headersTimeoutMs;
  server.keepAliveTimeout = LIMITS.keepAliveTimeoutMs;
  server.maxRequestsPerSocket = LIMITS.maxRequestsPerConnection;
  admission = admitConnections(server, limits);
  return server;
}

function rejectsHeaders(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  if (req.rawHeaders.length / 2 <= LIMITS.maxHeadersCount) return false;
  send(res, 431, `more than ${LIMITS.maxHeadersCount} headers\n`, { connection: 'close' });
  return true;
}

/** No endpoint takes a body: answer 413 (Content-Length > 0) or 400 (chunked) without reading it. */
function rejectsBody(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  const length = req.headers['content-length'];
  if (req.headers['transfer-encoding'] !== undefined) {
    send(res, 400, 'request bodies are not accepted\n', { connection: 'close' });
    return true;
  }
  if (length !== undefined && length !== '0') {
    send(res, 413, 'request bodies are not accepted\n', { connection: 'close' });
    return true;
  }
  return false;
}

export function send(res: http.ServerResponse, status: number, body: string, headers: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

export function sendJson(res: http.ServerResponse, status: number, json: unknown): void {
  send(res, status, `${JSON.stringify(json, null, 2)}\n`, { 'content-type': 'application/json' });
}

/**
 * The request path without its query string. The request target may be in absolute-form
 * (`GET http://host/health_check.html`), which a server must accept (RFC 9112 §3.2.2); its path is
 * what counts, whatever the host.
 */
export function pathOf(req: http.IncomingMessage): string {
  let url = req.url ?? '/';
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url);
  if (absolute) url = url.slice(absolute[0].length) || '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Connections the kernel queues before the sidecar accepts them. Node's default, 511, overflows
 * under a reconnecting flood, and a probe whose SYN is dropped waits a whole SYN retransmission
 * (1 s) for its answer; the kernel caps it at net.core.somaxconn (4096 on Linux >= 5.4).
 */
export const LISTEN_BACKLOG = 4096;

/** Listens and resolves with the bound port (the one picked when `port` is 0). */
export function listen(server: http.Server, port: number, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, backlog: LISTEN_BACKLOG, ...(host === undefined ? {} : { host }) }, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

export function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * The application behind the real Envoy in tests (test support, not shipped): what a gateway routes
 * to, with the kinds of traffic whose fate during a drain matters.
 *
 *   GET /                              200 "ok"
 *   GET /slow?ms=N                     200 after N ms (a long request)
 *   GET /stream?chunks=N&intervalMs=M  chunked download, one line every M ms
 *   GET /sse?events=N&intervalMs=M     Server-Sent Events (text/event-stream), N events (0: endless)
 *   GET /ws                            WebSocket echo (the `ws` package)
 *
 * A numbered feed for reconnecting long-lived clients (/sse and /ws with `t0`): message n of the
 * feed is due at t0 + n x intervalMs (epoch ms, the client's clock: one machine). A connection
 * starts at `from` (SSE: or Last-Event-ID + 1), sends at once every message already due (the
 * catch-up after a reconnect), then each at its due time; a client that resumes from its last
 * number + 1 loses nothing, so a gap in what it receives is a lost message. The response (the
 * WebSocket handshake's too) carries `x-upstream-port`, so a client knows which app, hence which
 * pod, served it. WebSocket messages are the numbers as text; SSE events carry `id: n`.
 *   GET /sse?t0=T&from=N&intervalMs=M&events=K   (events 0: endless)
 *   GET /ws?t0=T&from=N&intervalMs=M             (server push; what the client sends is ignored)
 *   GET /healthz/ready                 200 (plays pilot-agent's readiness behind Envoy's 15021 listener)
 *
 * Every timer is bounded and cleared on close(); `open` says how many requests it is serving, so a
 * test can tell Envoy's count from the app's.
 */
import * as http from 'node:http';
import type * as net from 'node:net';
import { WebSocketServer } from 'ws';

/** Upper bound of any wait the app makes (a bad query must not hold a test open). */
const MAX_WAIT_MS = 120_000;

export interface TestUpstream {
  readonly port: number;
  /** Requests being served now (WebSocket sessions included). */
  open(): number;
  /** When `open()` last reached 0 (epoch ms); null while some are open. */
  idleSince(): number | null;
  /** Requests served since start, by path. */
  readonly served: Map<string, number>;
  close(): Promise<void>;
}

/** The header a feed response carries: the app's own port. */
export const UPSTREAM_PORT_HEADER = 'x-upstream-port';

/** Feed parameters from a query (and SSE's Last-Event-ID); null when the request asks for no feed (no `t0`). */
export function feedParams(url: URL, lastEventId?: string | string[]): { t0: number; from: number; intervalMs: number } | null {
  const t0 = Number(url.searchParams.get('t0'));
  if (!url.searchParams.has('t0') || !Number.isFinite(t0) || t0 <= 0) return null;
  const header = typeof lastEventId === 'string' && /^\d+$/.test(lastEventId) ? Number(lastEventId) + 1 : null;
  const from = header ?? boundedNumber(url.searchParams.get('from'), 0, Number.MAX_SAFE_INTEGER);
  return { t0, from, intervalMs: Math.max(10, boundedNumber(url.searchParams.get('intervalMs'), 100)) };
}

function boundedNumber(value: string | null, fallback: number, max = MAX_WAIT_MS): number {
  const n = Number(value ?? fallback);
  return Number.isFinite(n) && n >= 0 ? Math.min(n, max) : fallback;
}

export async function startTestUpstream(host = '127.0.0.1'): Promise<TestUpstream> {
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<net.Socket>();
  const served = new Map<string, number>();
  let open = 0;
  let idleSince: number | null = Date.now();
  const opened = () => {
    open++;
    idleSince = null;
  };
  const closed = () => {
    open--;
    if (open === 0) idleSince = Date.now();
  };
  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
    return t;
  };

  let port = 0;
  /** Sends feed messages from `from` (each at its due time) until `alive()` is false or `count` are sent. */
  const feed = (p: { t0: number; from: number; intervalMs: number }, count: number, alive: () => boolean, send: (n: number) => void, end: () => void) => {
    let n = p.from;
    const tick = () => {
      if (!alive()) return;
      const due = Math.floor((Date.now() - p.t0) / p.intervalMs);
      while (n <= due) {
        send(n++);
        if (count > 0 && n - p.from >= count) return end();
      }
      later(Math.max(1, p.t0 + n * p.intervalMs - Date.now()), tick);
    };
    tick();
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://upstream');
    served.set(url.pathname, (served.get(url.pathname) ?? 0) + 1);
    opened();
    let counted = true;
    const done = () => {
      if (counted) closed();
      counted = false;
    };
    res.on('close', done);
    req.resume();
    const intervalMs = boundedNumber(url.searchParams.get('intervalMs'), 100);
    switch (url.pathname) {
      case '/':
      case '/healthz/ready':
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
        return;
      case '/slow': {
        const ms = boundedNumber(url.searchParams.get('ms'), 1000);
        later(ms, () => {
          if (!res.destroyed) res.writeHead(200, { 'content-type': 'text/plain' }).end(`slow ${ms}\n`);
        });
        return;
      }
      case '/stream':
      case '/sse': {
        const sse = url.pathname === '/sse';
        const fp = sse ? feedParams(url, req.headers['last-event-id']) : null;
        if (fp) {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', [UPSTREAM_PORT_HEADER]: String(port) });
          const events = boundedNumber(url.searchParams.get('events'), 0, 100_000);
          feed(
            fp,
            events,
            () => !res.destroyed,
            (n) => res.write(`id: ${n}\ndata: event ${n}\n\n`),
            () => res.end(),
          );
          return;
        }
        const count = boundedNumber(url.searchParams.get(sse ? 'events' : 'chunks'), 5, 100_000);
        res.writeHead(200, sse ? { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } : { 'content-type': 'text/plain' });
        let sent = 0;
        const tick = () => {
          if (res.destroyed) return;
          res.write(sse ? `id: ${sent}\ndata: event ${sent}\n\n` : `chunk ${sent}\n`);
          sent++;
          if (count > 0 && sent >= count) res.end();
          else later(intervalMs, tick);
        };
        tick();
        return;
      }
      default:
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  });
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  wss.on('headers', (headers, req) => {
    if (feedParams(new URL(req.url ?? '/', 'http://upstream'))) headers.push(`${UPSTREAM_PORT_HEADER}: ${port}`);
  });
  wss.on('connection', (ws, req: http.IncomingMessage) => {
    opened();
    const fp = feedParams(new URL(req.url ?? '/', 'http://upstream'));
    if (fp) {
      feed(
        fp,
        0,
        () => ws.readyState === ws.OPEN,
        (n) => ws.send(String(n)),
        () => ws.close(),
      );
      ws.on('close', closed);
      ws.on('error', () => {});
      return;
    }
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
    ws.on('close', closed);
    ws.on('error', () => {});
  });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://upstream');
    served.set(url.pathname, (served.get(url.pathname) ?? 0) + 1);
    if (url.pathname !== '/ws') {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });

  port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port: 0 }, () => resolve((server.address() as net.AddressInfo).port));
  });

  return {
    port,
    open: () => open,
    idleSince: () => idleSince,
    served,
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const c of wss.clients) c.terminate();
      wss.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

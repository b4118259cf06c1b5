/**
 * The application behind the real Envoy in tests (test support, not shipped): what a gateway routes
 * to, with the kinds of traffic whose fate during a drain matters.
 *
 *   GET /                              200 "ok"
 *   GET /slow?ms=N                     200 after N ms (a long request)
 *   GET /stream?chunks=N&intervalMs=M  chunked download, one line every M ms
 *   GET /sse?events=N&intervalMs=M     Server-Sent Events (text/event-stream), N events (0: endless)
 *   GET /ws                            WebSocket echo (the `ws` package)
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
  wss.on('connection', (ws) => {
    opened();
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

  const port = await new Promise<number>((resolve, reject) => {
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

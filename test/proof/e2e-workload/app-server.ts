/**
 * The application of the 8-cell experiment, written for it: an HTTP server in the shape of the Go
 * demo the experiment used, with its switches. `/slow?ms=N` answers after N ms, `/health` at once.
 *
 * - GRACEFUL=true: on SIGTERM stop accepting (close the listener and idle connections), finish the
 *   requests in flight, exit; give up after SHUTDOWN_TIMEOUT_SEC (seconds, may be fractional).
 *   This is what Go's http.Server.Shutdown does, with Node's server.close().
 * - GRACEFUL=false: no SIGTERM handler: the default action kills the process at once, cutting
 *   whatever is in flight.
 *
 * `/slow` sends its status line and headers first and the body when the time is up, so a client
 * can tell a request that reached the app and was cut (headers, then a broken body) from one that
 * never reached it (no response at all). Run: PORT=8080 GRACEFUL=true node app-server.js
 */
import { createServer } from 'node:http';

const port = Number(process.env.PORT ?? 8080);
const graceful = process.env.GRACEFUL === 'true';
const shutdownTimeoutSec = Number(process.env.SHUTDOWN_TIMEOUT_SEC ?? 30);
const name = process.env.POD_NAME ?? `pod-${process.pid}`;
/** Upper bound on one /slow request, so a bad query cannot hold the process. */
const MAX_SLOW_MS = 600_000;

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://app');
  if (url.pathname === '/health') {
    res.writeHead(200, { 'content-type': 'text/plain', connection: 'close' }).end('ok\n');
    return;
  }
  if (url.pathname === '/slow') {
    const ms = Math.min(Math.max(Number(url.searchParams.get('ms') ?? 0) || 0, 0), MAX_SLOW_MS);
    const body = `ok ${name} ${ms}\n`;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body), connection: 'close' });
    res.flushHeaders();
    const timer = setTimeout(() => res.end(body), ms);
    res.on('close', () => clearTimeout(timer));
    return;
  }
  res.writeHead(404, { connection: 'close' }).end();
});

if (graceful) {
  process.once('SIGTERM', () => {
    process.stdout.write(`${name} SIGTERM: graceful shutdown, timeout ${shutdownTimeoutSec}s\n`);
    // Stops accepting at once; Node 19+ also closes idle connections, as Go's Shutdown does.
    server.close(() => {
      process.stdout.write(`${name} drained\n`);
      process.exit(0);
    });
    setTimeout(() => {
      process.stdout.write(`${name} shutdown timeout\n`);
      process.exit(1);
    }, shutdownTimeoutSec * 1000).unref();
  });
}

server.listen(port, '127.0.0.1', () => process.stdout.write(`${name} listening on ${port} graceful=${graceful}\n`));

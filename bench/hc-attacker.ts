/**
 * The attacks of issue 18 (items 3 and 16) as a separate process, so the attacker's own event loop
 * never delays the probes being measured. Modes:
 *   slowloris PORT N FROM    N connections from address FROM, each sending a header line per
 *                            second and never finishing; reconnecting as soon as one is closed
 *   idle PORT N FROM         N connections from FROM that send nothing; reconnecting on close
 *   pipeline PORT N FROMS DEPTH PATH
 *                            N connections spread over the comma-separated addresses FROMS, each
 *                            writing DEPTH pipelined `GET PATH` at once and never reading,
 *                            then one more GET every 100 ms (a write to a connection the
 *                            server closed fails: how an attacker that never reads notices);
 *                            reconnecting on close (issue 34, attack 3)
 *   fat-admin BYTES          an Envoy admin whose /stats answers BYTES of valid stats lines (one
 *                            counted listener gauge of 1, the rest other gauges), /ready LIVE
 *   keepalive PORT N FROM PATH
 *                            a probe storm: N keep-alive connections from FROM, each sending
 *                            `GET PATH` as soon as the last answer arrived (the cluster's
 *                            probe-load measurement, docs/cluster.md)
 * Prints one JSON line {"event":"ready", ...} and runs until killed; on SIGTERM prints
 * {"event":"stats", "connects": n, "closed": n, "answered": n}.
 *
 * Run by bench/hc-flood-bench.ts, hc-pipeline-bench.ts and hc-cpu-share-bench.ts (node dist/bench/hc-attacker.js ...).
 */
import * as http from 'node:http';
import * as net from 'node:net';

const [mode, ...args] = process.argv.slice(2);
let connects = 0;
let closed = 0;
let answered = 0;
let stopping = false;

function flood(port: number, n: number, from: string, slowloris: boolean): void {
  const open = () => {
    if (stopping) return;
    connects++;
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      if (!slowloris) return;
      socket.write('GET /health_check.html HTTP/1.1\r\nHost: x\r\n');
      timer = setInterval(() => socket.write(`X-${Math.random().toString(36).slice(2, 6)}: y\r\n`), 1000);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      closed++;
      if (timer) clearInterval(timer);
      setImmediate(open);
    });
  };
  for (let i = 0; i < n; i++) open();
  process.stdout.write(`${JSON.stringify({ event: 'ready', mode, n, from })}\n`);
}

function pipeline(port: number, n: number, froms: string[], depth: number, path: string): void {
  const one = `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
  const burst = Buffer.from(one.repeat(depth));
  const open = (from: string) => {
    if (stopping) return;
    connects++;
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: from }, () => socket.write(burst));
    socket.pause(); // never read: the answers pile up on the server's side
    const more = setInterval(() => {
      if (socket.writable) socket.write(one);
    }, 100);
    socket.on('error', () => {});
    socket.on('close', () => {
      closed++;
      clearInterval(more);
      setImmediate(() => open(from));
    });
  };
  for (let i = 0; i < n; i++) open(froms[i % froms.length]!);
  process.stdout.write(`${JSON.stringify({ event: 'ready', mode, n, froms, depth, path })}\n`);
}

function fatAdmin(bytes: number): void {
  const lines = ['listener.0.0.0.0_8080.downstream_cx_active: 1'];
  let size = lines[0]!.length + 1;
  for (let i = 0; size < bytes; i++) {
    const line = `cluster.outbound_80_svc${i}.upstream_cx_active: 0`;
    lines.push(line);
    size += line.length + 1;
  }
  const body = `${lines.join('\n')}\n`;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/ready') res.end('LIVE\n');
    else if (path === '/stats') res.end(body);
    else if (path === '/drain_listeners') res.end('OK\n');
    else {
      res.statusCode = 404;
      res.end();
    }
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address() as net.AddressInfo;
    process.stdout.write(`${JSON.stringify({ event: 'ready', mode, adminUrl: `http://127.0.0.1:${address.port}`, bytes: body.length })}\n`);
  });
}

function keepalive(port: number, n: number, from: string, path: string): void {
  for (let i = 0; i < n; i++) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const next = (): void => {
      if (stopping) return;
      const req = http.get({ host: '127.0.0.1', port, path, agent, localAddress: from }, (res) => {
        res.resume();
        res.on('end', () => {
          answered++;
          next();
        });
      });
      req.on('response', () => {
        if (!req.reusedSocket) connects++;
      });
      req.on('error', () => setTimeout(next, 10));
    };
    next();
  }
  process.stdout.write(`${JSON.stringify({ event: 'ready', mode, n, from, path })}\n`);
}

// The counts once a second too: a process killed with SIGKILL has said them already.
setInterval(() => process.stdout.write(`${JSON.stringify({ event: 'stats', connects, closed, answered })}\n`), 1000);

process.on('SIGTERM', () => {
  stopping = true;
  process.stdout.write(`${JSON.stringify({ event: 'stats', connects, closed, answered })}\n`);
  process.exit(0);
});

if (mode === 'slowloris' || mode === 'idle') flood(Number(args[0]), Number(args[1]), args[2] ?? '127.0.0.1', mode === 'slowloris');
else if (mode === 'pipeline') pipeline(Number(args[0]), Number(args[1]), (args[2] ?? '127.0.0.1').split(','), Number(args[3]), args[4] ?? '/');
else if (mode === 'fat-admin') fatAdmin(Number(args[0]));
else if (mode === 'keepalive') keepalive(Number(args[0]), Number(args[1]), args[2] ?? '127.0.0.1', args[3] ?? '/');
else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}

/**
 * Which connection gives way when a sidecar server is full. Node's own `maxConnections` refuses the
 * newest connection, and the newest is the LB's next probe: 256 slowloris connections, or a stream
 * of connects that send nothing, kept every probe out. Here the new connection
 * is always let in and the server sheds an old one instead:
 *
 * - a source (remote address) holding `perSource` connections gives up its own oldest idle one;
 * - a full server takes the oldest idle connection of the source holding the most.
 *
 * "Idle" means no request in progress: never sent one yet (a slowloris or a bare connect), or a
 * keep-alive connection between requests. A connection whose request is being answered (a held
 * `/wait-closed`) is never shed; when nothing is idle, the new connection is closed.
 *
 * One request per connection at a time: an LB, the kubelet and Prometheus send a request and read
 * its answer before the next. A request that arrives while the connection's previous one is still
 * being answered (HTTP/1.1 pipelining) closes the connection, unanswered, and the rest of what it
 * sent is never handed to the server: 2,000 pipelined GETs on each of 28 connections used to keep
 * the server answering the attacker while the LB's probes timed out (bench/hc-pipeline-bench.ts).
 * A source that pipelined has its new connections closed on accept, before a byte of theirs is
 * parsed, until it has not connected for PIPELINING_PENALTY_MS: an attacker that reconnects at once would otherwise have the server
 * parse a read's worth of requests per reconnect (900 reconnects in 4 s from 28 connections).
 * No LB, kubelet or Prometheus pipelines; one that shares an attacker's address (SNAT) shares its
 * penalty, as it shares its per-source limit.
 *
 * An LB probes from its own addresses and the kubelet from the node, each with a connection or two,
 * so a flood from any other address only ever displaces itself. A flood from the probes' own
 * address (behind SNAT, or a NodePort without `externalTrafficPolicy: Local`) competes with them;
 * keep the port reachable by the LB and the nodes only (docs/hc.md, "Exposure").
 */
import type * as http from 'node:http';
import type * as net from 'node:net';

export interface AdmissionLimits {
  /** Connections the server holds at most. */
  readonly total: number;
  /** Connections one remote address holds at most. */
  readonly perSource: number;
}

interface Tracked {
  readonly source: string;
  busy: number;
}

/** What a server's request handler asks before it answers. */
export interface Admission {
  /**
   * Takes `req` as its connection's one request in progress: false (and the connection closed,
   * the request unanswered) when another request of that connection is still being answered.
   */
  take(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  /** Connections pipelining closed so far. */
  readonly pipelined: number;
}

/**
 * Stops Node's parser from building requests out of what a closed connection already sent. Node
 * parses a whole read (up to 64 KiB: 1,600 pipelined GETs) and makes a request of each, even on a
 * destroyed socket: 2,000 on each of 200 connections cost 4.2 s of CPU, 0.6 s with this. The
 * parser is Node's own (`socket.parser`, its `onIncoming` callback, Node 20 `_http_server.js`); a
 * Node that names it otherwise only loses the saving, and test/hc/pipelining.test.ts, which
 * counts the requests the server saw, says so.
 */
function dropTheRest(socket: net.Socket): void {
  const parser = (socket as net.Socket & { parser?: { onIncoming?: unknown } | null }).parser;
  if (parser && typeof parser.onIncoming === 'function') parser.onIncoming = () => 0;
}

/** How long a source that pipelined has its new connections closed on accept (renewed by each pipelining and each connect meanwhile). */
export const PIPELINING_PENALTY_MS = 10_000;
/** Sources remembered at most (the oldest forgotten first): an attacker with many addresses bounds no memory. */
export const PENALISED_SOURCES_MAX = 4096;

export function admitConnections(server: http.Server, limits: AdmissionLimits, now: () => number = Date.now): Admission {
  // Source -> the end of its penalty, in the order penalised (Maps iterate in insertion order).
  const penalised = new Map<string, number>();
  const penalise = (source: string) => {
    penalised.delete(source);
    penalised.set(source, now() + PIPELINING_PENALTY_MS);
    if (penalised.size > PENALISED_SOURCES_MAX) penalised.delete(penalised.keys().next().value!);
  };
  // Maps iterate in insertion order: the first entry is the oldest connection.
  const all = new Map<net.Socket, Tracked>();
  const bySource = new Map<string, Set<net.Socket>>();

  const oldestIdle = (sockets: Iterable<net.Socket>): net.Socket | undefined => {
    for (const socket of sockets) if (all.get(socket)!.busy === 0) return socket;
    return undefined;
  };
  const heaviestSource = (): Set<net.Socket> | undefined => {
    let heaviest: Set<net.Socket> | undefined;
    for (const sockets of bySource.values()) if (!heaviest || sockets.size > heaviest.size) heaviest = sockets;
    return heaviest;
  };
  const forget = (socket: net.Socket) => {
    const tracked = all.get(socket);
    if (!tracked) return;
    all.delete(socket);
    const sockets = bySource.get(tracked.source)!;
    sockets.delete(socket);
    if (sockets.size === 0) bySource.delete(tracked.source);
  };
  const shed = (victim: net.Socket | undefined, newcomer: net.Socket) => {
    const gone = victim ?? newcomer;
    forget(gone);
    gone.destroy();
  };

  server.on('connection', (socket: net.Socket) => {
    const source = socket.remoteAddress ?? '';
    const until = penalised.get(source);
    if (until !== undefined) {
      if (until > now()) {
        // Each connect during the penalty renews it: a penalty that ran out while the attacker
        // kept reconnecting let all its connections in at once, each with a read's worth of
        // pipelined requests to parse (a probe stall of 30-70 ms every 10 s in
        // bench/hc-pipeline-bench.ts). It ends PIPELINING_PENALTY_MS after the source stops.
        penalise(source);
        socket.destroy();
        return;
      }
      penalised.delete(source);
    }
    all.set(socket, { source, busy: 0 });
    const sockets = bySource.get(source) ?? new Set<net.Socket>();
    sockets.add(socket);
    bySource.set(source, sockets);
    socket.once('close', () => forget(socket));
    if (sockets.size > limits.perSource) shed(oldestIdle(sockets), socket);
    else if (all.size > limits.total) {
      const heaviest = heaviestSource()!;
      shed(oldestIdle(heaviest) ?? oldestIdle(all.keys()), socket);
    }
  });

  let pipelined = 0;
  return {
    get pipelined() {
      return pipelined;
    },
    take(req, res) {
      const socket = req.socket;
      if (socket.destroyed) return false;
      const tracked = all.get(socket);
      if (!tracked) return true;
      if (tracked.busy > 0) {
        pipelined++;
        penalise(tracked.source);
        dropTheRest(socket);
        forget(socket);
        socket.destroy();
        return false;
      }
      tracked.busy++;
      let done = false;
      const idle = () => {
        if (done) return;
        done = true;
        tracked.busy--;
      };
      res.once('finish', idle);
      res.once('close', idle);
      return true;
    },
  };
}

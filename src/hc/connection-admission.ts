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

export function admitConnections(server: http.Server, limits: AdmissionLimits): void {
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

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const tracked = all.get(req.socket);
    if (!tracked) return;
    tracked.busy++;
    res.once('close', () => {
      tracked.busy--;
    });
  });
}

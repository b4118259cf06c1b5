/**
 * A raw TCP echo server (test support, not shipped): the upstream of the tcp_proxy listener. Every
 * socket is destroyed on close().
 */
import * as net from 'node:net';

export interface TcpEcho {
  readonly port: number;
  /** Connections open now. */
  open(): number;
  close(): Promise<void>;
}

export async function startTcpEcho(): Promise<TcpEcho> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.pipe(s);
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => resolve((server.address() as net.AddressInfo).port));
  });
  return {
    port,
    open: () => sockets.size,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

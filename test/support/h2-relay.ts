/**
 * A TCP relay on loopback that reads the HTTP/2 frames a server sends its client (test support, not
 * shipped): the wire's witness of how a stream ended, whatever the client library makes of it.
 * One client connection at a time is enough for the long-lived probe; every connection's frames
 * go to one record. Each RST_STREAM and GOAWAY the server sends is kept with its time, its stream
 * and its error code; DATA, HEADERS and the rest are passed on unread. Every socket is destroyed
 * on close().
 */
import * as net from 'node:net';

/** A frame from the server, ms after `t0()`. */
export interface ServerFrame {
  readonly type: 'RST_STREAM' | 'GOAWAY';
  /** RST_STREAM: the stream reset; GOAWAY: the last stream the server will process. */
  readonly streamId: number;
  /** The HTTP/2 error code (RFC 9113 §7): 0 NO_ERROR, 2 INTERNAL_ERROR, 8 CANCEL, ... */
  readonly code: number;
  readonly atMs: number;
}

export interface H2Relay {
  readonly port: number;
  /** The RST_STREAM and GOAWAY frames the server sent, in order. */
  frames(): readonly ServerFrame[];
  close(): Promise<void>;
}

const FRAME_HEADER = 9;
const RST_STREAM = 3;
const GOAWAY = 7;
/** A frame larger than SETTINGS_MAX_FRAME_SIZE's ceiling (2^24 - 1) cannot be; a longer buffer is not HTTP/2. */
const MAX_BUFFERED = (1 << 24) + FRAME_HEADER;

/**
 * Reads a server's frames from its byte stream (the server sends no preface of its own to skip);
 * answers false once the bytes cannot be HTTP/2.
 */
function frameReader(record: (f: Omit<ServerFrame, 'atMs'>) => void): (chunk: Buffer) => boolean {
  let buf: Buffer = Buffer.alloc(0);
  return (chunk) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    while (buf.length >= FRAME_HEADER) {
      const length = buf.readUIntBE(0, 3);
      if (buf.length < FRAME_HEADER + length) break;
      const type = buf[3]!;
      const streamId = buf.readUInt32BE(5) & 0x7fffffff;
      if (type === RST_STREAM && length >= 4) record({ type: 'RST_STREAM', streamId, code: buf.readUInt32BE(FRAME_HEADER) });
      if (type === GOAWAY && length >= 8)
        record({ type: 'GOAWAY', streamId: buf.readUInt32BE(FRAME_HEADER) & 0x7fffffff, code: buf.readUInt32BE(FRAME_HEADER + 4) });
      buf = buf.subarray(FRAME_HEADER + length);
    }
    return buf.length <= MAX_BUFFERED;
  };
}

/** Relays 127.0.0.1:<port> to 127.0.0.1:`upstreamPort`; times are ms after `t0()`. */
export async function startH2Relay(upstreamPort: number, t0: () => number): Promise<H2Relay> {
  const frames: ServerFrame[] = [];
  const sockets = new Set<net.Socket>();
  const keep = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(upstreamPort, '127.0.0.1');
    keep(client);
    keep(upstream);
    const read = frameReader((f) => frames.push({ ...f, atMs: Date.now() - t0() }));
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (read(chunk)) client.write(chunk);
      else client.destroy();
    });
    upstream.on('end', () => client.end());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => resolve((server.address() as net.AddressInfo).port));
  });
  return {
    port,
    frames: () => [...frames],
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

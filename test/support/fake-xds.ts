/**
 * A stand-in for istiod's xDS server (test support, not shipped): an HTTP/2 (h2c) server that
 * accepts Envoy's ADS stream, answers each first request per resource type with an empty
 * DiscoveryResponse (so Envoy finishes initialising, as it does once istiod has pushed) and then
 * never finishes the stream. That keeps one permanent upstream request open on the `xds-grpc`
 * cluster, the real `cluster.xds-grpc.upstream_rq_active: 1` an in-flight count must not include.
 *
 * Only the protobuf fields it needs are read (DiscoveryRequest.type_url = 4, response_nonce = 5)
 * and written (DiscoveryResponse.version_info = 1, type_url = 4, nonce = 5); envoyproxy/envoy
 * api/envoy/service/discovery/v3/discovery.proto.
 */
import * as http2 from 'node:http2';
import type * as net from 'node:net';

export interface FakeXds {
  readonly port: number;
  /** ADS streams open now. */
  openStreams(): number;
  /** Type URLs answered so far. */
  readonly answered: ReadonlySet<string>;
  close(): Promise<void>;
}

const MAX_MESSAGE_BYTES = 1024 * 1024;

function readVarint(buf: Buffer, at: number): [value: number, next: number] {
  let value = 0;
  let shift = 0;
  for (let i = at; i < buf.length && i < at + 10; i++) {
    value += (buf[i]! & 0x7f) * 2 ** shift;
    if ((buf[i]! & 0x80) === 0) return [value, i + 1];
    shift += 7;
  }
  throw new Error('bad varint');
}

/** The string fields of one protobuf message, by field number (other wire types skipped). */
function stringFields(msg: Buffer): Map<number, string> {
  const out = new Map<number, string>();
  let at = 0;
  while (at < msg.length) {
    const [key, afterKey] = readVarint(msg, at);
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) [, at] = readVarint(msg, afterKey);
    else if (wire === 1) at = afterKey + 8;
    else if (wire === 5) at = afterKey + 4;
    else if (wire === 2) {
      const [len, start] = readVarint(msg, afterKey);
      out.set(field, msg.subarray(start, start + len).toString('utf8'));
      at = start + len;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

function encodeString(field: number, value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  const len: number[] = [];
  let n = bytes.length;
  do {
    len.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>>= 7;
  } while (n > 0);
  return Buffer.concat([Buffer.from([field * 8 + 2, ...len]), bytes]);
}

function grpcFrame(message: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

export async function startFakeXds(host = '127.0.0.1'): Promise<FakeXds> {
  const server = http2.createServer();
  const streams = new Set<http2.ServerHttp2Stream>();
  const answered = new Set<string>();
  server.on('stream', (stream, headers) => {
    if (!String(headers[':path']).endsWith('/StreamAggregatedResources')) {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' }, { endStream: true });
      return;
    }
    streams.add(stream);
    stream.on('close', () => streams.delete(stream));
    stream.on('error', () => {});
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
    let pending = Buffer.alloc(0);
    stream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5) {
        const len = pending.readUInt32BE(1);
        if (len > MAX_MESSAGE_BYTES) {
          stream.close(http2.constants.NGHTTP2_PROTOCOL_ERROR);
          return;
        }
        if (pending.length < 5 + len) break;
        const fields = stringFields(pending.subarray(5, 5 + len));
        pending = pending.subarray(5 + len);
        const typeUrl = fields.get(4) ?? '';
        if (typeUrl === '' || (fields.get(5) ?? '') !== '' || answered.has(typeUrl)) continue; // an ACK, or answered
        answered.add(typeUrl);
        stream.write(grpcFrame(Buffer.concat([encodeString(1, '1'), encodeString(4, typeUrl), encodeString(5, `nonce-${answered.size}`)])));
      }
    });
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
    s.on('error', () => {});
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port: 0 }, () => resolve((server.address() as net.AddressInfo).port));
  });
  return {
    port,
    openStreams: () => streams.size,
    answered,
    async close() {
      for (const s of sessions) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

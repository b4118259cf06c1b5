/**
 * The gRPC application behind the real Envoy in tests (test support, not shipped), served by
 * `@grpc/grpc-js`: service `gracegate.test.Stream` with
 *   Watch  (server stream): `{ count, intervalMs }` -> one `{ seq }` every intervalMs (count 0: endless)
 *   Chat   (bidirectional): echoes each `{ seq }` it receives
 *   Ping   (unary): `{}` -> `{ seq: 0 }`
 * Messages are JSON in gRPC's length-prefixed frames (grpc-js takes any serializer; no .proto file
 * is needed for a test service). Every timer is bounded and cleared on close().
 */
import * as grpc from '@grpc/grpc-js';

export interface Msg {
  readonly seq: number;
  readonly count?: number;
  readonly intervalMs?: number;
}

const encode = (m: Msg) => Buffer.from(JSON.stringify(m));
const decode = (b: Buffer) => JSON.parse(b.toString()) as Msg;
const MAX_INTERVAL_MS = 10_000;

export const STREAM_SERVICE: grpc.ServiceDefinition = {
  Watch: {
    path: '/gracegate.test.Stream/Watch',
    requestStream: false,
    responseStream: true,
    requestSerialize: encode,
    requestDeserialize: decode,
    responseSerialize: encode,
    responseDeserialize: decode,
  },
  Chat: {
    path: '/gracegate.test.Stream/Chat',
    requestStream: true,
    responseStream: true,
    requestSerialize: encode,
    requestDeserialize: decode,
    responseSerialize: encode,
    responseDeserialize: decode,
  },
  Ping: {
    path: '/gracegate.test.Stream/Ping',
    requestStream: false,
    responseStream: false,
    requestSerialize: encode,
    requestDeserialize: decode,
    responseSerialize: encode,
    responseDeserialize: decode,
  },
};

/** The client class for STREAM_SERVICE (grpc-js's generic constructor). */
export const StreamClient = grpc.makeGenericClientConstructor(STREAM_SERVICE, 'Stream');

export interface GrpcApp {
  readonly port: number;
  /** Calls being served now. */
  open(): number;
  close(): Promise<void>;
}

export async function startGrpcApp(): Promise<GrpcApp> {
  const server = new grpc.Server();
  const timers = new Set<NodeJS.Timeout>();
  let open = 0;
  server.addService(STREAM_SERVICE, {
    Watch(call: grpc.ServerWritableStream<Msg, Msg>) {
      open++;
      let counted = true;
      const count = Math.max(0, Math.floor(call.request.count ?? 0));
      const interval = Math.min(MAX_INTERVAL_MS, Math.max(10, call.request.intervalMs ?? 100));
      let seq = 0;
      const done = () => {
        clearInterval(t);
        timers.delete(t);
        if (counted) open--;
        counted = false;
      };
      const t = setInterval(() => {
        if (call.cancelled) return done();
        call.write({ seq: seq++ });
        if (count > 0 && seq >= count) {
          done();
          call.end();
        }
      }, interval);
      timers.add(t);
      call.on('cancelled', done);
      call.on('close', done);
      call.on('error', done);
    },
    Chat(call: grpc.ServerDuplexStream<Msg, Msg>) {
      open++;
      let counted = true;
      const done = () => counted && ((counted = false), open--);
      call.on('data', (m: Msg) => call.write({ seq: m.seq }));
      call.on('end', () => {
        call.end();
        done();
      });
      call.on('cancelled', done);
      call.on('error', done);
    },
    Ping(_call: grpc.ServerUnaryCall<Msg, Msg>, callback: grpc.sendUnaryData<Msg>) {
      callback(null, { seq: 0 });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    port,
    open: () => open,
    async close() {
      for (const t of timers) clearInterval(t);
      timers.clear();
      server.forceShutdown();
    },
  };
}

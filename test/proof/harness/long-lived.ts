/**
 * Reconnecting long-lived clients for the end-to-end runs (spec.traffic.longLived): real protocol
 * implementations through the LB in front of the pods, each reading the upstream app's numbered
 * feed (test/support/test-upstream.ts: message n due at t0 + n x interval).
 *
 *   websocket  the `ws` package, GET /ws?t0&from (HTTP/1.1 upgrade through HAProxy's mode http)
 *   sse        test/support/sse-client.ts (Node http + the WHATWG parser), GET /sse?t0 with
 *              Last-Event-ID on a reconnect, as an EventSource does
 *
 * Every client reconnects when its stream ends, however it ends, and resumes from its last
 * number + 1 (query `from` / Last-Event-ID): a gap in what it receives is a message lost, a number
 * twice is a duplicate. Each stream (session) is recorded with the pod that served it (the feed's
 * x-upstream-port), its open and close times and how the client saw it end, and is named to Envoy
 * (SESSION_HEADER; a TCP one by its port), so a run can tell from Envoy's own log a planned close
 * (the rotation at max_stream_duration) from a cut (Envoy's exit, the LB's flush):
 * long-lived-report.ts.
 *
 *   tcp        Node's net through the pod's tcp_proxy listener to its echo server (numbered lines,
 *              echoed), the pod picked as for gRPC: HAProxy's mode http carries no raw TCP
 *   grpc-bidi  `@grpc/grpc-js` Chat (bidirectional echo) straight to a pod's Envoy listener, the pod
 *              picked as an L4 LB does (round robin over the pods whose LB endpoint answers 200):
 *              HAProxy carries gRPC only over HTTP/2 to the server (`proto h2` on each server
 *              line), and the harness runs `gracegate lb-config`'s HTTP/1.1 backend untouched.
 */
import * as grpc from '@grpc/grpc-js';
import * as http from 'node:http';
import * as net from 'node:net';
import WebSocket from 'ws';
import { StreamClient, type Msg } from '../../support/grpc-app';
import { httpCall } from './http';
import { openSse } from '../../support/sse-client';
import { SESSION_HEADER } from '../../support/stream-end-log';
import { UPSTREAM_PORT_HEADER } from '../../support/test-upstream';
import { sleep, waitFor } from './proc';

export type LongLivedClientKind = 'websocket' | 'sse' | 'grpc-bidi' | 'tcp';

/**
 * A pod as a gRPC client picks it (gRPC streams go to the pods directly, see below): its listener,
 * its LB endpoint, and its app's port (which names the pod in the account).
 */
export type PodTarget = { listenPort: number; tcpPort: number; healthUrl: string; upstreamPort: number };

/** One message every FEED_INTERVAL_MS per client. */
export const FEED_INTERVAL_MS = 100;
/**
 * Messages a client may be behind its feed and still count as caught up: a second's worth (on a
 * loaded machine a message arrives a few hundred ms late; a stuck client is seconds behind).
 */
const BEHIND_SLACK = 10;
/**
 * A gRPC call with no echo for this long (20 feed intervals) is cancelled and opened again
 * elsewhere. On a loaded machine a stream Envoy ended at max_stream_duration sometimes brought the
 * client no status at all, and the client waited for good; such a call's `how` starts with STALLED.
 */
const GRPC_STALL_MS = 2000;
const STALLED = 'stalled: no echo for 2 s, cancelled';
/** A client waits this long before it reconnects (after a close, or a failed attempt). */
export const RECONNECT_DELAY_MS = 50;

/** One stream of a client: from its open (the handshake/response) to its close. Times epoch ms. */
export type LlSession = {
  client: string;
  kind: LongLivedClientKind;
  /** Its name in Envoy's stream-end log: the SESSION_HEADER the client sent (`websocket-1/3`: the client's third attempt). */
  id: string;
  /** TCP: the client's port, Envoy's key for the connection; null for the other kinds. */
  localPort: number | null;
  /** The upstream app that served it (its pod), from the feed's header; null when it did not say. */
  upstreamPort: number | null;
  openMs: number;
  closeMs: number | null;
  /** How the client saw it end (`close 1006`, `response aborted`, `stopped by the client`). */
  how: string | null;
  received: number;
  firstSeq: number | null;
  lastSeq: number | null;
  /** When its last message arrived (epoch ms): the stream's data end, which can precede the close. */
  lastMsgMs: number | null;
};

export type LlClientSummary = {
  client: string;
  kind: LongLivedClientKind;
  received: number;
  /** Numbers skipped (lost messages). */
  lost: number;
  /** Numbers received twice or out of order (a resume that went back). */
  duplicates: number;
  /** Connect attempts that failed before a stream opened (refused, 5xx). */
  failedAttempts: number;
  /** Streams after the first. */
  reconnects: number;
  /** The longest a message arrived after it was due (the longest outage a reconnect cost), ms. */
  maxLateMs: number;
  /** Due messages not received when the client stopped (beyond the last FEED_INTERVAL_MS x 3). */
  behindAtStop: number;
};

class Client {
  readonly sessions: LlSession[] = [];
  lastSeq = -1;
  received = 0;
  lost = 0;
  duplicates = 0;
  failedAttempts = 0;
  maxLateMs = 0;
  stoppedAt: number | null = null;
  private closeCurrent: (() => void) | null = null;
  private loop: Promise<void> = Promise.resolve();
  /** Connect attempts so far: the next one's session id. */
  private attempts = 0;

  constructor(
    readonly name: string,
    readonly kind: LongLivedClientKind,
    readonly baseUrl: string,
    readonly t0: number,
    readonly targets: () => PodTarget[] = () => [],
    private rr = 0,
  ) {}

  /**
   * gRPC bidi (Chat, an echo): the client sends number n at t0 + n x interval and the echo is
   * what it receives; after a reconnect it sends again from its last echoed number + 1 (what is
   * already due at once). It picks a pod the way an L4 LB does: the next one, round robin, whose
   * LB endpoint answers 200.
   */
  private async directOnce(
    id: string,
    open: (upstream: string, localPort?: number) => void,
    end: (how: string) => void,
    setClose: (fn: () => void) => void,
    current: () => LlSession | null,
  ): Promise<void> {
    const all = this.targets();
    let target: PodTarget | undefined;
    for (let i = 0; i < all.length && !target; i++) {
      const t = all[(this.rr + i) % all.length]!;
      try {
        if ((await httpCall('GET', `${t.healthUrl}/health_check.html`, 300)).status === 200) target = t;
      } catch {
        // not answering: the next
      }
    }
    this.rr++;
    if (!target || this.stoppedAt !== null) return end('no pod answers 200');
    if (this.kind === 'tcp') return this.tcpOn(target, open, end, setClose, current);
    const client = new StreamClient(`127.0.0.1:${target.listenPort}`, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
    const metadata = new grpc.Metadata();
    metadata.set(SESSION_HEADER, id);
    const call = (client as unknown as { Chat(metadata: grpc.Metadata): grpc.ClientDuplexStream<Msg, Msg> }).Chat(metadata);
    let timer: NodeJS.Timeout | undefined;
    let opened = false;
    // A call whose echoes stop (or never start: on a loaded machine, a connect the leaving pod took
    // as its listener closed) is given up, bounded, and the client goes on to the next pod.
    let progressAt = Date.now();
    let stalled = false;
    const stallWatch = setInterval(() => {
      if (Date.now() - progressAt <= GRPC_STALL_MS) return;
      stalled = true;
      call.cancel();
    }, 250);
    const finish = (how: string) => {
      clearTimeout(timer);
      clearInterval(stallWatch);
      client.close();
      end(stalled ? `${STALLED} (then ${how})` : how);
    };
    setClose(() => call.cancel());
    call.on('data', (m: Msg) => {
      progressAt = Date.now();
      if (!opened) {
        opened = true;
        open(String(target.upstreamPort));
      }
      const s = current();
      if (s) this.got(s, m.seq);
    });
    call.on('error', () => {});
    call.on('status', (st: grpc.StatusObject) => finish(`status ${grpc.status[st.code]}`));
    let next = this.lastSeq + 1;
    const send = () => {
      const due = Math.floor((Date.now() - this.t0) / FEED_INTERVAL_MS);
      while (next <= due) call.write({ seq: next++ });
      timer = setTimeout(send, Math.max(1, this.t0 + next * FEED_INTERVAL_MS - Date.now()));
    };
    send();
  }

  private got(s: LlSession, seq: number): void {
    if (this.stoppedAt !== null) return;
    if (seq <= this.lastSeq) {
      this.duplicates++;
      return;
    }
    if (seq > this.lastSeq + 1) this.lost += seq - this.lastSeq - 1;
    this.lastSeq = seq;
    this.received++;
    s.received++;
    s.firstSeq ??= seq;
    s.lastSeq = seq;
    s.lastMsgMs = Date.now();
    this.maxLateMs = Math.max(this.maxLateMs, Date.now() - (this.t0 + seq * FEED_INTERVAL_MS));
  }

  /** Opens one stream; resolves when it has ended (null: it never opened). */
  private once(): Promise<LlSession | null> {
    const from = this.lastSeq + 1;
    const query = `t0=${this.t0}&from=${from}&intervalMs=${FEED_INTERVAL_MS}`;
    const id = `${this.name}/${++this.attempts}`;
    return new Promise((resolve) => {
      let session: LlSession | null = null;
      const open = (upstream: string | string[] | undefined, localPort?: number) => {
        session = {
          client: this.name,
          kind: this.kind,
          id,
          localPort: localPort ?? null,
          upstreamPort: typeof upstream === 'string' ? Number(upstream) : null,
          openMs: Date.now(),
          closeMs: null,
          how: null,
          received: 0,
          firstSeq: null,
          lastSeq: null,
          lastMsgMs: null,
        };
        this.sessions.push(session);
      };
      const end = (how: string) => {
        if (session && session.closeMs === null) {
          session.closeMs = Date.now();
          session.how = this.stoppedAt !== null ? 'stopped by the client' : how;
        }
        this.closeCurrent = null;
        resolve(session);
      };
      if (this.kind === 'grpc-bidi' || this.kind === 'tcp') {
        void this.directOnce(
          id,
          open,
          end,
          (fn) => (this.closeCurrent = fn),
          () => session,
        );
        return;
      }
      if (this.kind === 'websocket') {
        const ws = new WebSocket(`${this.baseUrl.replace(/^http/, 'ws')}/ws?${query}`, { handshakeTimeout: 5000, headers: { [SESSION_HEADER]: id } });
        this.closeCurrent = () => ws.terminate();
        ws.on('upgrade', (res: http.IncomingMessage) => open(res.headers[UPSTREAM_PORT_HEADER]));
        ws.on('message', (d) => session && this.got(session, Number(d.toString())));
        ws.on('error', () => {});
        ws.on('unexpected-response', (req, res) => {
          res.resume();
          req.destroy();
          end(`HTTP ${res.statusCode}`);
        });
        ws.on('close', (code) => end(`close ${code}`));
        return;
      }
      // Node's parser can emit the first body chunk (the catch-up) before the response promise settles: hold those events until the session exists.
      const early: number[] = [];
      const conn = openSse(`${this.baseUrl}/sse?${query}`, (e) => (session ? this.got(session, Number(e.lastEventId)) : early.push(Number(e.lastEventId))), {
        headers: { [SESSION_HEADER]: id },
        ...(this.lastSeq >= 0 ? { lastEventId: String(this.lastSeq) } : {}),
      });
      this.closeCurrent = () => conn.request.destroy();
      conn.request.on('error', () => {});
      conn.request.setTimeout(5000, () => conn.request.destroy());
      conn.response.then(
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            res.on('end', () => end(`HTTP ${res.statusCode}`));
            return;
          }
          open(res.headers[UPSTREAM_PORT_HEADER]);
          for (const seq of early.splice(0)) this.got(session!, seq);
          res.on('end', () => end('response ended'));
          res.on('aborted', () => end('response aborted'));
          res.on('error', () => end('response aborted'));
          res.on('close', () => end('connection closed'));
        },
        (err: NodeJS.ErrnoException) => end(`error ${err.code ?? err.message}`),
      );
    });
  }

  /** TCP through the pod's tcp_proxy listener to its echo server: numbered lines, echoed; resumes like gRPC. */
  private tcpOn(
    target: PodTarget,
    open: (upstream: string, localPort?: number) => void,
    end: (how: string) => void,
    setClose: (fn: () => void) => void,
    current: () => LlSession | null,
  ): void {
    const socket = net.connect(target.tcpPort, '127.0.0.1');
    let timer: NodeJS.Timeout | undefined;
    let buf = '';
    const finish = (how: string) => {
      clearTimeout(timer);
      socket.destroy();
      end(how);
    };
    setClose(() => socket.destroy());
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      open(String(target.upstreamPort), socket.localPort);
      let next = this.lastSeq + 1;
      const send = () => {
        if (socket.destroyed) return;
        const due = Math.floor((Date.now() - this.t0) / FEED_INTERVAL_MS);
        while (next <= due) socket.write(`${next++}\n`);
        timer = setTimeout(send, Math.max(1, this.t0 + next * FEED_INTERVAL_MS - Date.now()));
      };
      send();
    });
    socket.on('data', (c: string) => {
      buf += c;
      const lines = buf.split('\n');
      buf = lines.pop()!;
      const s = current();
      if (s) for (const l of lines) this.got(s, Number(l));
    });
    socket.on('end', () => finish('FIN from the proxy'));
    socket.on('error', (e: NodeJS.ErrnoException) => finish(`error ${e.code ?? e.message}`));
    socket.on('close', () => finish('closed'));
  }

  /** Runs until stop(): every end is followed by a reconnect. Resolves once the first stream has its first message. */
  async start(): Promise<void> {
    this.loop = (async () => {
      while (this.stoppedAt === null) {
        const s = await this.once();
        if (!s) this.failedAttempts++;
        if (this.stoppedAt === null) await sleep(RECONNECT_DELAY_MS);
      }
    })();
    await waitFor(`${this.name}: a first message`, 10_000, () => this.received > 0, 20).catch((err: Error) => {
      throw new Error(`${err.message} (${this.failedAttempts} failed attempts)`);
    });
  }

  async stop(): Promise<void> {
    this.stoppedAt ??= Date.now();
    this.closeCurrent?.();
    await this.loop;
  }

  /** Messages the feed has sent by now that this client has not had (beyond 3 in transit). */
  behindNow(): number {
    return Math.max(0, Math.floor((Date.now() - this.t0) / FEED_INTERVAL_MS) - this.lastSeq - BEHIND_SLACK);
  }

  summary(): LlClientSummary {
    const due = Math.floor(((this.stoppedAt ?? Date.now()) - this.t0) / FEED_INTERVAL_MS);
    return {
      client: this.name,
      kind: this.kind,
      received: this.received,
      lost: this.lost,
      duplicates: this.duplicates,
      failedAttempts: this.failedAttempts,
      reconnects: Math.max(0, this.sessions.length - 1),
      maxLateMs: Math.max(0, Math.round(this.maxLateMs)),
      behindAtStop: Math.max(0, due - this.lastSeq - BEHIND_SLACK),
    };
  }
}

/** A set of reconnecting clients through `baseUrl`. */
export class LongLivedClients {
  private readonly clients: Client[];

  constructor(baseUrl: string, counts: Partial<Record<LongLivedClientKind, number>>, targets: () => PodTarget[] = () => []) {
    const t0 = Date.now();
    this.clients = (Object.entries(counts) as Array<[LongLivedClientKind, number]>).flatMap(([kind, n]) =>
      Array.from({ length: n }, (_, i) => new Client(`${kind}-${i + 1}`, kind, baseUrl, t0, targets, i)),
    );
  }

  async start(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.start()));
  }

  /**
   * Waits, at most `maxMs`, until every client has caught up with its feed. A stream rotated just
   * before the run ends leaves its client up to ~1.2 s without messages (Envoy closes an HTTP/1.1
   * connection about 1 s after it ends the stream; docs/long-lived.md), longer than the load's tail:
   * stopping then would count a reconnect in progress as "behind". One still behind after `maxMs`
   * stays behind in its summary, and the test fails on it.
   */
  async settle(maxMs: number): Promise<void> {
    const deadline = Date.now() + maxMs;
    while (Date.now() < deadline && this.clients.some((c) => c.behindNow() > 0)) await sleep(50);
  }

  async stop(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.stop()));
  }

  get sessions(): LlSession[] {
    return this.clients.flatMap((c) => c.sessions);
  }

  summaries(): LlClientSummary[] {
    return this.clients.map((c) => c.summary());
  }
}

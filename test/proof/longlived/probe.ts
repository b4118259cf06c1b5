/**
 * What a long-lived client sees through a drain of the real Envoy (test support for the fact test
 * and the report script, not shipped). One Envoy per scenario, configured as an Istio gateway
 * (test/support/istio-like-bootstrap.ts) with a gRPC app behind an HTTP/2 cluster and a tcp_proxy
 * listener to a TCP echo server. Each kind has its own client, a real implementation of its
 * protocol, sending or receiving one numbered message every INTERVAL_MS:
 *
 *   websocket           the `ws` package, to the test app's echo (HTTP/1.1 upgrade)
 *   grpc-server-stream  `@grpc/grpc-js`, Watch (server stream)
 *   grpc-bidi           `@grpc/grpc-js`, Chat (bidirectional echo)
 *   sse                 test/support/sse-client.ts (Node http + the WHATWG event-stream parser)
 *   http2-multiplexed   Node's http2: one SSE stream and a short GET every 200 ms on one session
 *   tcp                 Node's net, through the tcp_proxy listener to an echo server
 *
 * Scenarios:
 *   drain   Istio's defaults (no duration limits), HCM drain_timeout 300 ms; the sidecar's drain
 *           calls for the version (src/hc/envoy-version.ts); observed OBSERVE_MS, then SIGTERM.
 *   rotate  no drain; HCM max_connection_duration, max_stream_duration and the tcp_proxy's
 *           max_downstream_connection_duration set (what the plan emits); observed from the open.
 *
 * Every wait is bounded; every client and server is closed at the end.
 */
import * as grpc from '@grpc/grpc-js';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import WebSocket from 'ws';
import { drainProfileFor, parseEnvoyVersion } from '../../../src/hc/envoy-version';
import { COUNTING_STATS_SUFFIXES } from '../../../src/contract/envoy-stat-names';
import { startGrpcApp, StreamClient, type Msg } from '../../support/grpc-app';
import { startH2Relay, type H2Relay } from '../../support/h2-relay';
import { startEnvoy, type RealEnvoy } from '../../support/real-envoy';
import { openSse } from '../../support/sse-client';
import { startTcpEcho } from '../../support/tcp-echo';
import { sleep, waitFor } from '../../support/wait';

export const KINDS = ['websocket', 'grpc-server-stream', 'grpc-bidi', 'sse', 'http2-multiplexed', 'tcp'] as const;
export type Kind = (typeof KINDS)[number];
export type Scenario = 'drain' | 'rotate';

export const INTERVAL_MS = 100;
/** drain: how long the clients are watched after the drain calls (drain_timeout 300 ms + 1 s delayed close fit in it). */
export const OBSERVE_MS = 2000;
export const HCM_DRAIN_TIMEOUT_MS = 300;
/** rotate: the limits the plan would emit, scaled down to seconds. */
export const ROTATE = { maxConnectionDurationMs: 1000, maxStreamDurationMs: 2000, tcpMaxConnectionDurationMs: 2000, observeMs: 4500 } as const;

/** The stats that say how a stream is counted, by short name. */
export const COUNTED_STATS: Readonly<Record<string, string>> = {
  'listener.0.0.0.0_8080.downstream_cx_active': 'listener cx_active',
  'listener.0.0.0.0_9000.downstream_cx_active': 'tcp listener cx_active',
  'http.outbound_0.0.0.0_8080.downstream_cx_active': 'HCM cx_active',
  'http.outbound_0.0.0.0_8080.downstream_cx_http1_active': 'HCM cx_http1_active',
  'http.outbound_0.0.0.0_8080.downstream_cx_http2_active': 'HCM cx_http2_active',
  'http.outbound_0.0.0.0_8080.downstream_rq_active': 'HCM rq_active',
  'http.outbound_0.0.0.0_8080.downstream_cx_upgrades_active': 'HCM cx_upgrades_active',
};
const STATS_FILTER = `^(${Object.keys(COUNTED_STATS)
  .map((k) => k.replace(/\./g, '\\.'))
  .join('|')})$`;

export interface Signal {
  /** e.g. 'GOAWAY NO_ERROR', 'gRPC channel READY -> IDLE', 'Connection: close'. */
  readonly what: string;
  /** ms after t0 (drain: the first drain call; rotate: the stream's open). */
  readonly atMs: number;
}

export interface KindResult {
  readonly kind: Kind;
  /** Stat deltas when this stream opened (short names from COUNTED_STATS; zeros left out). */
  readonly counted: Readonly<Record<string, number>>;
  /** Every hint to leave the client received, in order. */
  readonly signals: readonly Signal[];
  /** Messages received after t0 and before the end. */
  readonly messagesAfterT0: number;
  /** Messages whose sequence number skipped one (lost in between): must be 0. */
  readonly gaps: number;
  /** How the stream ended, as the client saw it, and when (ms after t0). */
  readonly end: { readonly how: string; readonly atMs: number } | null;
  /**
   * When its first message arrived (ms after t0): the stream was open at Envoy by then. A stream
   * opened late (a gRPC channel's connect) ends late by as much; absent in older results.
   */
  readonly firstMessageMs?: number | null;
  /**
   * gRPC kinds: the first RST_STREAM Envoy sent on the client's connection (its HTTP/2 error code,
   * ms after t0), read on the wire in front of the client (test/support/h2-relay.ts): how the stream
   * ended at Envoy, whether or not the client library reported it. Absent in older results.
   */
  readonly reset?: { readonly code: number; readonly atMs: number } | null;
  /** drain: the stream was still open at the SIGTERM (ms after t0); rotate: null. */
  readonly openAtExitMs: number | null;
}

export interface ScenarioResult {
  readonly scenario: Scenario;
  readonly envoy: string;
  /** The drain calls made (drain scenario). */
  readonly calls: readonly string[];
  /** Stats with every stream open (short names). */
  readonly totals: Readonly<Record<string, number>>;
  /** Stats at the end of the observation (drain: just before the SIGTERM). */
  readonly totalsAtEnd: Readonly<Record<string, number>>;
  readonly kinds: readonly KindResult[];
}

/** Each gRPC client on its own connection (grpc-js shares one per target across clients by default). */
const OWN_CONNECTION = { 'grpc.use_local_subchannel_pool': 1 };

interface Tracker {
  readonly kind: Kind;
  signals: Signal[];
  received: number;
  lastSeq: number;
  gaps: number;
  end: { how: string; atMs: number } | null;
  firstMessageMs: number | null;
  counted: Record<string, number>;
  stop(): void;
}

function shortStats(stats: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, value] of stats) if (COUNTED_STATS[name]) out[COUNTED_STATS[name]!] = value;
  return out;
}

/** Runs one scenario on one pinned Envoy version. */
export async function runScenario(version: string, scenario: Scenario): Promise<ScenarioResult> {
  const grpcApp = await startGrpcApp();
  const tcpEcho = await startTcpEcho();
  const envoy: RealEnvoy = await startEnvoy({
    version,
    hcmDrainTimeoutMs: HCM_DRAIN_TIMEOUT_MS,
    grpcUpstreamPort: grpcApp.port,
    tcpUpstreamPort: tcpEcho.port,
    // The counting stats as gracegate's pod changes keep them, plus the per-protocol ones the table reads.
    statsInclusionSuffixes: [...COUNTING_STATS_SUFFIXES, 'downstream_cx_upgrades_active', 'downstream_cx_http1_active', 'downstream_cx_http2_active'],
    ...(scenario === 'rotate'
      ? {
          hcmMaxConnectionDurationMs: ROTATE.maxConnectionDurationMs,
          hcmMaxStreamDurationMs: ROTATE.maxStreamDurationMs,
          tcpMaxConnectionDurationMs: ROTATE.tcpMaxConnectionDurationMs,
        }
      : {}),
  });
  let t0 = 0;
  const since = () => Date.now() - t0;
  const trackers: Tracker[] = [];
  const track = (kind: Kind, stop: () => void): Tracker => {
    const t: Tracker = { kind, signals: [], received: 0, lastSeq: -1, gaps: 0, end: null, firstMessageMs: null, counted: {}, stop };
    trackers.push(t);
    return t;
  };
  const got = (t: Tracker, seq: number) => {
    if (t0 > 0 && !t.end) t.received++;
    if (t0 > 0) t.firstMessageMs ??= since();
    if (t.lastSeq >= 0 && seq !== t.lastSeq + 1) t.gaps++;
    t.lastSeq = seq;
  };
  const ended = (t: Tracker, how: string) => {
    t.end ??= { how, atMs: since() };
  };
  const timers: NodeJS.Timeout[] = [];
  /** Each gRPC client connects through a relay of its own that reads what Envoy sends it. */
  const relays = new Map<Kind, H2Relay>();
  const grpcTarget = async (kind: Kind): Promise<string> => {
    const relay = await startH2Relay(envoy.trafficPort, () => t0);
    relays.set(kind, relay);
    return `127.0.0.1:${relay.port}`;
  };
  const every = (fn: () => void) => timers.push(setInterval(fn, INTERVAL_MS));
  /** The drain scenario reads how each kind is counted, one at a time, before anything else runs. */
  const counting = { done: scenario !== 'drain' };

  const openers: Record<Kind, () => Promise<void>> = {
    async websocket() {
      const ws = new WebSocket(`ws://127.0.0.1:${envoy.trafficPort}/ws`);
      const t = track('websocket', () => ws.terminate());
      ws.on('error', () => {});
      ws.on('message', (d) => got(t, Number(d.toString())));
      ws.on('close', (code, reason) => ended(t, `close ${code}${reason.length ? ` ${reason.toString()}` : ''}`));
      await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
      let seq = 0;
      every(() => ws.readyState === WebSocket.OPEN && ws.send(String(seq++)));
    },
    async 'grpc-server-stream'() {
      const client = new StreamClient(await grpcTarget('grpc-server-stream'), grpc.credentials.createInsecure(), OWN_CONNECTION);
      const call = (client as unknown as { Watch(m: Msg): grpc.ClientReadableStream<Msg> }).Watch({ seq: 0, count: 0, intervalMs: INTERVAL_MS });
      const t = track('grpc-server-stream', () => (call.cancel(), client.close()));
      watchChannel(client, t, since);
      call.on('data', (m: Msg) => got(t, m.seq));
      call.on('error', () => {});
      call.on('status', (s: grpc.StatusObject) => ended(t, `status ${grpc.status[s.code]}${s.details ? `: ${s.details}` : ''}`));
      await firstMessage(t);
    },
    async 'grpc-bidi'() {
      const client = new StreamClient(await grpcTarget('grpc-bidi'), grpc.credentials.createInsecure(), OWN_CONNECTION);
      const call = (client as unknown as { Chat(): grpc.ClientDuplexStream<Msg, Msg> }).Chat();
      const t = track('grpc-bidi', () => (call.cancel(), client.close()));
      watchChannel(client, t, since);
      call.on('data', (m: Msg) => got(t, m.seq));
      call.on('error', () => {});
      call.on('status', (s: grpc.StatusObject) => ended(t, `status ${grpc.status[s.code]}${s.details ? `: ${s.details}` : ''}`));
      let seq = 0;
      call.write({ seq: seq++ });
      every(() => !t.end && call.write({ seq: seq++ }));
      await firstMessage(t);
    },
    async sse() {
      const conn = openSse(`${envoy.trafficUrl}/sse?events=0&intervalMs=${INTERVAL_MS}`, (e) => got(t, Number(e.lastEventId)));
      const t = track('sse', () => conn.request.destroy());
      const res = await conn.response;
      if (res.headers.connection === 'close') t.signals.push({ what: 'Connection: close', atMs: since() });
      res.on('end', () => ended(t, 'response ended (chunked terminator)'));
      res.on('aborted', () => ended(t, 'response aborted (connection closed mid-body)'));
      res.on('error', (e) => ended(t, `error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
      res.on('close', () => ended(t, 'connection closed'));
      await firstMessage(t);
    },
    async 'http2-multiplexed'() {
      const session = http2.connect(envoy.trafficUrl);
      const t = track('http2-multiplexed', () => session.destroy());
      session.on('error', () => {});
      session.on('goaway', (code, lastStreamId) =>
        t.signals.push({ what: `GOAWAY ${code === 0 ? 'NO_ERROR' : code} (last stream ${lastStreamId})`, atMs: since() }),
      );
      const stream = session.request({ ':path': `/sse?events=0&intervalMs=${INTERVAL_MS}` });
      stream.setEncoding('utf8');
      let buf = '';
      stream.on('data', (c: string) => {
        buf += c;
        for (let m = /id: (\d+)\n/.exec(buf); m; m = /id: (\d+)\n/.exec(buf)) {
          got(t, Number(m[1]));
          buf = buf.slice(m.index + m[0].length);
        }
      });
      stream.on('error', () => {});
      stream.on('close', () => ended(t, `stream closed (RST_STREAM code ${stream.rstCode ?? 'none'})`));
      stream.end();
      // The short requests beside it: a client that multiplexes keeps using the session (from the
      // end of the counting on: one in flight would show in another kind's count).
      every(() => {
        if (!counting.done || session.closed || session.destroyed || t.end) return;
        const short = session.request({ ':path': '/' });
        short.on('error', () => {});
        short.resume();
        short.end();
      });
      await firstMessage(t);
    },
    async tcp() {
      const socket = net.connect(envoy.tcpProxyPort!, '127.0.0.1');
      const t = track('tcp', () => socket.destroy());
      let buf = '';
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => {
        buf += c;
        const lines = buf.split('\n');
        buf = lines.pop()!;
        for (const l of lines) got(t, Number(l));
      });
      socket.on('error', (e: NodeJS.ErrnoException) => ended(t, `error ${e.code}`));
      socket.on('end', () => ended(t, 'FIN from the proxy'));
      socket.on('close', () => ended(t, 'closed'));
      await new Promise<void>((resolve, reject) => (socket.once('connect', () => resolve()), socket.once('error', reject)));
      let seq = 0;
      every(() => !socket.destroyed && socket.write(`${seq++}\n`));
      await firstMessage(t);
    },
  };

  let calls: string[] = [];
  let totals: Record<string, number> = {};
  let totalsAtEnd: Record<string, number> = {};
  const openAtExit = new Map<Tracker, number>();
  try {
    if (scenario === 'drain') {
      // Open one kind at a time and read how Envoy counts it.
      for (const kind of KINDS) {
        const before = shortStats(await envoy.stats(STATS_FILTER));
        await openers[kind]();
        await sleep(150);
        const after = shortStats(await envoy.stats(STATS_FILTER));
        const t = trackers[trackers.length - 1]!;
        for (const name of Object.keys(after)) {
          const d = (after[name] ?? 0) - (before[name] ?? 0);
          if (d !== 0) t.counted[name] = d;
        }
      }
      totals = shortStats(await envoy.stats(STATS_FILTER));
      counting.done = true;
      calls = [...drainProfileFor(parseEnvoyVersion(envoy.versionString)).calls];
      t0 = Date.now();
      for (const call of calls) {
        const res = await envoy.admin('POST', call);
        if (res.status !== 200) throw new Error(`POST ${call}: ${res.status} ${res.body}`);
      }
      await sleep(OBSERVE_MS);
      totalsAtEnd = shortStats(await envoy.stats(STATS_FILTER));
      for (const t of trackers) if (!t.end) openAtExit.set(t, since());
      await envoy.stop();
      // A window, not a wait for an event that must come: a stream still open at its end is
      // ended by the clean-up below, and long-lived-facts.test.ts reads how each one ended.
      await waitFor('every stream to end after Envoy exits', 3000, () => trackers.every((t) => t.end), 20).catch(() => undefined);
    } else {
      // Open all kinds together; t0 is the open (each stream's timers start there, within ms).
      t0 = Date.now();
      await Promise.all(KINDS.map((k) => openers[k]()));
      totals = shortStats(await envoy.stats(STATS_FILTER));
      // A window (see above): a gRPC call still writing can miss its reset and stay open until the clean-up.
      await waitFor('every stream to end at its bound', ROTATE.observeMs, () => trackers.every((t) => t.end), 20).catch(() => undefined);
      totalsAtEnd = shortStats(await envoy.stats(STATS_FILTER));
    }
  } finally {
    for (const t of timers) clearInterval(t);
    for (const t of trackers) t.stop();
    await envoy.stop();
    await grpcApp.close();
    await tcpEcho.close();
    for (const relay of relays.values()) await relay.close();
  }
  return {
    scenario,
    envoy: envoy.version,
    calls,
    totals,
    totalsAtEnd,
    kinds: KINDS.map((kind) => {
      const t = trackers.find((x) => x.kind === kind)!;
      return {
        kind,
        counted: t.counted,
        signals: t.signals,
        messagesAfterT0: t.received,
        gaps: t.gaps,
        end: t.end,
        firstMessageMs: t.firstMessageMs,
        ...(relays.has(kind) ? { reset: firstReset(relays.get(kind)!) } : {}),
        openAtExitMs: openAtExit.get(t) ?? null,
      };
    }),
  };
}

function firstReset(relay: H2Relay): { code: number; atMs: number } | null {
  const rst = relay.frames().find((f) => f.type === 'RST_STREAM');
  return rst ? { code: rst.code, atMs: rst.atMs } : null;
}

/** grpc-js says nothing about a GOAWAY to the call; its channel leaves READY for IDLE. */
function watchChannel(client: grpc.Client, t: Tracker, since: () => number): void {
  const channel = client.getChannel();
  let state = channel.getConnectivityState(true);
  const watch = () => {
    if (t.end && state === grpc.connectivityState.SHUTDOWN) return;
    channel.watchConnectivityState(state, Date.now() + 60_000, (err) => {
      if (err) return;
      const next = channel.getConnectivityState(false);
      if (state === grpc.connectivityState.READY)
        t.signals.push({ what: `channel ${grpc.connectivityState[state]} -> ${grpc.connectivityState[next]}`, atMs: since() });
      state = next;
      if (next !== grpc.connectivityState.SHUTDOWN) watch();
    });
  };
  watch();
}

async function firstMessage(t: Tracker): Promise<void> {
  await waitFor(`${t.kind}: a first message through Envoy`, 5000, () => t.lastSeq >= 0, 20);
}

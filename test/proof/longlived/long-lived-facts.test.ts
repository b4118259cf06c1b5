import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pinnedEnvoys } from '../../support/real-envoy';
import { INTERVAL_MS, OBSERVE_MS, ROTATE, runScenario, type Kind, type KindResult, type ScenarioResult } from './probe';

// What each kind of long-lived client sees through a drain of each pinned real Envoy, and with the
// plan's duration limits (test/proof/longlived/probe.ts; the measured table is docs/long-lived.md).
// Orderings and lower bounds are exact (a timer does not fire early); upper bounds carry the
// slack this 2-core shared machine needs: measured 2-60 ms late, allowed SLACK_MS.
const SLACK_MS = 800;

const kind = (run: ScenarioResult, k: Kind): KindResult => run.kinds.find((x) => x.kind === k)!;
const before = (k: KindResult, ms: number) => k.signals.filter((s) => s.atMs < ms);

for (const pinned of pinnedEnvoys()) {
  test(`Envoy ${pinned.version}, drain: nothing tells a WebSocket, a gRPC stream, SSE or TCP to leave; only a multiplexing HTTP/2 client gets GOAWAY; SIGTERM ends them`, async () => {
    const run = await runScenario(pinned.version, 'drain');
    for (const k of run.kinds) {
      assert.equal(k.gaps, 0, `${k.kind}: no message lost`);
      assert.ok(k.messagesAfterT0 >= 10, `${k.kind}: messages keep flowing after the drain calls (${k.messagesAfterT0} in ${OBSERVE_MS} ms)`);
      assert.ok(k.openAtExitMs !== null, `${k.kind}: still open ${OBSERVE_MS} ms after the drain (drain_timeout did not end it)`);
      assert.ok(k.end && k.end.atMs >= k.openAtExitMs, `${k.kind}: ended by the SIGTERM, not before (${JSON.stringify(k.end)})`);
    }
    for (const k of ['websocket', 'grpc-server-stream', 'grpc-bidi', 'sse', 'tcp'] as const) {
      assert.deepEqual(before(kind(run, k), kind(run, k).openAtExitMs!), [], `${k}: no signal to leave before the SIGTERM`);
    }
    const h2 = kind(run, 'http2-multiplexed');
    assert.match(
      h2.signals[0]?.what ?? '',
      /^GOAWAY NO_ERROR \(last stream 2147483647\)/,
      'the next response on the multiplexed session carries a graceful GOAWAY',
    );
    assert.ok(h2.signals[0]!.atMs < 200 + SLACK_MS, `GOAWAY within one short-request interval of the drain (${h2.signals[0]!.atMs} ms)`);
    assert.match(h2.signals[1]?.what ?? '', /^GOAWAY NO_ERROR \(last stream \d+\)/, 'a final GOAWAY after drain_timeout');
    assert.match(kind(run, 'websocket').end!.how, /^close 1006/, 'WebSocket: abnormal close (no close frame)');
    for (const k of ['grpc-server-stream', 'grpc-bidi'] as const) assert.match(kind(run, k).end!.how, /^status UNAVAILABLE/, `${k}: UNAVAILABLE at the exit`);
    // How each is counted: every HTTP kind is one request and one connection; only the WebSocket
    // shows in upgrades; TCP only in its own listener's connections.
    assert.deepEqual(kind(run, 'websocket').counted, {
      'HCM cx_active': 1,
      'HCM cx_http1_active': 1,
      'HCM cx_upgrades_active': 1,
      'HCM rq_active': 1,
      'listener cx_active': 1,
    });
    for (const k of ['grpc-server-stream', 'grpc-bidi', 'http2-multiplexed'] as const) {
      assert.deepEqual(kind(run, k).counted, { 'HCM cx_active': 1, 'HCM cx_http2_active': 1, 'HCM rq_active': 1, 'listener cx_active': 1 }, k);
    }
    assert.deepEqual(kind(run, 'sse').counted, { 'HCM cx_active': 1, 'HCM cx_http1_active': 1, 'HCM rq_active': 1, 'listener cx_active': 1 });
    assert.deepEqual(kind(run, 'tcp').counted, { 'tcp listener cx_active': 1 });
    assert.deepEqual(run.totalsAtEnd, run.totals, 'the counts did not move during the drain');
  });

  test(`Envoy ${pinned.version}, max_connection_duration + max_stream_duration + tcp max_downstream_connection_duration end every kind at the bound`, async () => {
    const run = await runScenario(pinned.version, 'rotate');
    for (const k of run.kinds) {
      assert.equal(k.gaps, 0, `${k.kind}: no message lost`);
      assert.ok(k.end, `${k.kind}: ended`);
      const bound = k.kind === 'tcp' ? ROTATE.tcpMaxConnectionDurationMs : ROTATE.maxStreamDurationMs;
      assert.ok(k.end.atMs >= bound - 50, `${k.kind}: not before the bound (${k.end.atMs} ms)`);
    }
    // Counted from the stream's own first message: a stream opened late ends late by as much.
    for (const k of ['http2-multiplexed', 'tcp'] as const) {
      const { end, firstMessageMs } = kind(run, k);
      assert.ok(firstMessageMs !== null && firstMessageMs !== undefined, `${k}: a first message`);
      assert.ok(
        end!.atMs - firstMessageMs < ROTATE.maxStreamDurationMs + SLACK_MS,
        `${k}: ended at max_stream_duration (${end!.atMs} ms, its first message at ${firstMessageMs} ms)`,
      );
    }
    // gRPC: the end at Envoy is the RST_STREAM on the wire in front of the client. What grpc-js
    // makes of it is the client's side: INTERNAL at once, except that a reset with NO_ERROR (Envoy
    // 1.36.4) on a bidirectional call that is still writing can reach it as nothing at all. Node's
    // http2 ends such a stream only once the caller has also ended its writing, so the call then
    // waits for its own deadline; this probe's has none, and the test's clean-up cancels it.
    for (const k of ['grpc-server-stream', 'grpc-bidi'] as const) {
      const { end, firstMessageMs, reset, messagesAfterT0 } = kind(run, k);
      assert.ok(firstMessageMs !== null && firstMessageMs !== undefined, `${k}: a first message`);
      assert.ok(reset, `${k}: Envoy reset the stream (an RST_STREAM on the wire)`);
      assert.ok(
        reset.atMs >= ROTATE.maxStreamDurationMs - 50 && reset.atMs - firstMessageMs < ROTATE.maxStreamDurationMs + SLACK_MS,
        `${k}: reset at max_stream_duration (${reset.atMs} ms, its first message at ${firstMessageMs} ms)`,
      );
      // NO_ERROR or INTERNAL_ERROR (docs/long-lived.md gives each version's), the same for both kinds.
      assert.ok([0, 2].includes(reset.code), `${k}: reset with NO_ERROR or INTERNAL_ERROR (code ${reset.code})`);
      assert.equal(reset.code, kind(run, 'grpc-server-stream').reset?.code, `${k}: the same code as the server stream's`);
      assert.ok(messagesAfterT0 <= ROTATE.maxStreamDurationMs / INTERVAL_MS + 2, `${k}: no message after the reset (${messagesAfterT0})`);
      if (end!.how.startsWith(`status INTERNAL: Received RST_STREAM with code ${reset.code} `)) {
        assert.ok(end!.atMs - reset.atMs < SLACK_MS, `${k}: grpc-js reports the reset when it arrives (${end!.atMs} ms, reset at ${reset.atMs} ms)`);
      } else {
        assert.equal(k, 'grpc-bidi', `${k}: only a call still writing can miss its reset (${end!.how})`);
        assert.equal(reset.code, 0, `${k}: only a NO_ERROR reset goes unreported (${end!.how})`);
        assert.match(end!.how, /^status CANCELLED: Cancelled on client/, `${k}: no status until the clean-up cancelled it`);
      }
    }
    // HTTP/1.1 streams: the stream ends at the bound, the client sees the close about 1 s later.
    for (const k of ['websocket', 'sse'] as const) {
      assert.ok(
        kind(run, k).end!.atMs < ROTATE.maxStreamDurationMs + 1000 + SLACK_MS,
        `${k}: closed within max_stream_duration + 1 s (${kind(run, k).end!.atMs} ms)`,
      );
      assert.ok(kind(run, k).messagesAfterT0 <= ROTATE.maxStreamDurationMs / 100 + 2, `${k}: no message after the bound`);
      assert.deepEqual(kind(run, k).signals, [], `${k}: never asked to leave`);
    }
    // HTTP/2 and gRPC: asked to leave (GOAWAY) at max_connection_duration, before the cut.
    const h2 = kind(run, 'http2-multiplexed');
    assert.match(h2.signals[0]?.what ?? '', /^GOAWAY NO_ERROR/);
    for (const k of ['grpc-server-stream', 'grpc-bidi', 'http2-multiplexed'] as const) {
      const first = kind(run, k).signals[0];
      assert.ok(first, `${k}: told to leave`);
      assert.ok(
        first.atMs >= ROTATE.maxConnectionDurationMs - 50 && first.atMs < ROTATE.maxConnectionDurationMs + SLACK_MS,
        `${k}: at max_connection_duration (${first.atMs} ms)`,
      );
    }
    assert.match(kind(run, 'grpc-server-stream').end!.how, /^status INTERNAL: Received RST_STREAM/, 'grpc-server-stream: the cut reaches grpc-js as INTERNAL');
    assert.match(kind(run, 'websocket').end!.how, /^close 1006/);
    assert.equal(kind(run, 'tcp').end!.how, 'FIN from the proxy');
    assert.deepEqual(
      Object.values(run.totalsAtEnd).filter((v) => v !== 0),
      [],
      'every count back to 0',
    );
  });
}

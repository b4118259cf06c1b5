import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LlSession } from '../harness/long-lived';
import { closeCause, type PodTimes } from '../harness/long-lived-report';
import type { StreamEnd } from '../../support/stream-end-log';

// How a long-lived stream ended is read from Envoy's line for it and from the instant the harness
// killed its Envoy, never from the client's clock (harness/long-lived-report.ts). These tests hold
// the rules with written-out numbers: a client that saw everything seconds late is judged the same.

const T0 = 2_000_000;
const PORT = 41000;

function session(over: Partial<LlSession>): LlSession {
  return {
    client: 'websocket-1',
    kind: 'websocket',
    id: 'websocket-1/1',
    localPort: null,
    upstreamPort: PORT,
    openMs: T0,
    closeMs: T0 + 4000,
    how: 'close 1006',
    received: 30,
    firstSeq: 0,
    lastSeq: 29,
    lastMsgMs: T0 + 3000,
    ...over,
  };
}

function pod(streamEnds: StreamEnd[], over: Partial<PodTimes> = {}): PodTimes[] {
  return [
    {
      upstreamPort: PORT,
      pod: 'pod-1',
      server: 'gw-1',
      terminationStartMs: T0 + 1000,
      proxyExitMs: null,
      killedAtMs: null,
      lbDownMs: null,
      streamEnds,
      ...over,
    },
  ];
}

const http = (session: string, details: string, flags = '-'): StreamEnd => ({
  kind: 'http',
  session,
  clientPort: 52000,
  startMs: T0 - 50,
  durationMs: 3000,
  code: 200,
  flags,
  details,
});
const tcpEnd = (clientPort: number, flags: string): StreamEnd => ({
  kind: 'tcp',
  session: null,
  clientPort,
  startMs: T0,
  durationMs: 3000,
  code: null,
  flags,
  details: '-',
});

test("rotation: Envoy's duration limit ended it (max_duration_timeout, tcp DT), however late the client saw it", () => {
  const rotated = http('websocket-1/1', 'max_duration_timeout');
  // The client's open 1.2 s late and its last message and close 1.5 s late, as on a loaded machine.
  const late = session({ openMs: T0 + 1200, lastMsgMs: T0 + 4500, closeMs: T0 + 5600 });
  assert.equal(closeCause(late, pod([rotated])), 'rotation');
  const tcp = session({ kind: 'tcp', client: 'tcp-1', id: 'tcp-1/1', localPort: 50123, how: 'FIN from the proxy' });
  assert.equal(closeCause(tcp, pod([tcpEnd(50123, 'DT')])), 'rotation');
  // Another session's rotation, or another port's, says nothing of this one.
  assert.equal(closeCause(late, pod([http('websocket-1/2', 'max_duration_timeout')])), 'other');
  assert.equal(closeCause(tcp, pod([tcpEnd(50124, 'DT')])), 'other');
  // Ended by Envoy otherwise (the client went away, a reset): not a rotation.
  assert.equal(closeCause(late, pod([http('websocket-1/1', 'downstream_remote_disconnect', 'DC')])), 'other');
  assert.equal(closeCause(tcp, pod([tcpEnd(50123, 'UC')])), 'other');
});

test('envoy-exit: Envoy logged no end for it, was killed, and the client saw the end after the kill, however long after', () => {
  const killed = { killedAtMs: T0 + 4500, proxyExitMs: T0 + 4620 };
  // Seen 1 ms after the kill, and 3 s after it (a client loop that stalled): both cut by the kill.
  assert.equal(closeCause(session({ closeMs: T0 + 4501 }), pod([], killed)), 'envoy-exit');
  assert.equal(closeCause(session({ closeMs: T0 + 7500 }), pod([], killed)), 'envoy-exit');
  // Seen before the kill: something else ended it while Envoy ran.
  assert.equal(closeCause(session({ closeMs: T0 + 4499 }), pod([], killed)), 'other');
  // Envoy was never killed (it exited otherwise, or still runs): no line is no evidence of a cut.
  assert.equal(closeCause(session({ closeMs: T0 + 4700 }), pod([], { proxyExitMs: T0 + 4620 })), 'other');
  // A rotated stream whose delayed close the kill cut short is still a rotation.
  assert.equal(closeCause(session({ closeMs: T0 + 4501 }), pod([http('websocket-1/1', 'max_duration_timeout')], killed)), 'rotation');
});

test("the client's own stop, a stream of no known pod, and one never closed are not Envoy's", () => {
  const killed = { killedAtMs: T0 + 4500 };
  assert.equal(closeCause(session({ how: 'stopped by the client', closeMs: T0 + 4600 }), pod([], killed)), 'client-stop');
  assert.equal(closeCause(session({ upstreamPort: PORT + 1, closeMs: T0 + 4600 }), pod([], killed)), 'other');
  assert.equal(closeCause(session({ closeMs: null }), pod([], killed)), 'other');
});

test("lb-down (report only): Envoy saw the downstream go (DC) and the client's close came 100 ms before to 1 s after the LB's DOWN", () => {
  const down = { lbDownMs: T0 + 2000 };
  const dc = [http('websocket-1/1', 'downstream_remote_disconnect', 'DC')];
  assert.equal(closeCause(session({ closeMs: T0 + 2010 }), pod(dc, down)), 'lb-down');
  assert.equal(closeCause(session({ closeMs: T0 + 3100 }), pod(dc, down)), 'other');
  assert.equal(closeCause(session({ closeMs: T0 + 2010 }), pod([http('websocket-1/1', 'via_upstream')], down)), 'other');
});

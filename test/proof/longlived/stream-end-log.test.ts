import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import { pinnedEnvoys, startEnvoy } from '../../support/real-envoy';
import { SESSION_HEADER, STREAM_END_FLUSH_MS, endedByDurationLimit } from '../../support/stream-end-log';
import { startTcpEcho } from '../../support/tcp-echo';
import { waitFor } from '../../support/wait';

// The e2e runs judge how each long-lived stream ended by Envoy's own line for it
// (harness/long-lived-report.ts). This holds that witness to each pinned Envoy: a stream its
// duration limit ended says so (HTTP `max_duration_timeout`, tcp_proxy `DT`), one its client ended
// does not, a request without SESSION_HEADER is logged under none, and a stream Envoy still held
// when it was killed has no line at all.
const BOUND_MS = 1000;

/** An endless SSE stream with `session` in SESSION_HEADER (or none): the request, and its response's arrival (Envoy holds the stream). */
function sse(url: string, session: string | null): { req: http.ClientRequest; open: Promise<void> } {
  let opened = (): void => {};
  const open = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const req = http.get(`${url}/sse?events=0&intervalMs=50`, { agent: false, headers: session === null ? {} : { [SESSION_HEADER]: session } }, (res) => {
    res.on('error', () => {});
    res.resume();
    opened();
  });
  req.on('error', () => {});
  return { req, open };
}

for (const pinned of pinnedEnvoys()) {
  test(`Envoy ${pinned.version}: the stream-end log names what ended each long-lived stream, and a kill leaves the held ones without a line`, {
    timeout: 30_000,
  }, async () => {
    const echo = await startTcpEcho();
    const envoy = await startEnvoy({
      version: pinned.version,
      tcpUpstreamPort: echo.port,
      hcmMaxStreamDurationMs: BOUND_MS,
      tcpMaxConnectionDurationMs: BOUND_MS,
      streamEndLog: true,
      fileFlushIntervalMs: STREAM_END_FLUSH_MS,
    });
    try {
      const sessions = (session: string) => envoy.streamEnds().filter((e) => e.kind === 'http' && e.session === session);
      const tcpEnds = (port: number) => envoy.streamEnds().filter((e) => e.kind === 'tcp' && e.clientPort === port);
      sse(envoy.trafficUrl, 'rotated');
      sse(envoy.trafficUrl, null);
      const byClient = sse(envoy.trafficUrl, 'client-ended');
      const tcp = net.connect(envoy.tcpProxyPort!, '127.0.0.1');
      tcp.on('error', () => {});
      const tcpPort = await new Promise<number>((resolve) => tcp.once('connect', () => resolve(tcp.localPort!)));
      const tcpTimer = setInterval(() => tcp.write('x\n'), 50);
      await byClient.open;
      byClient.req.destroy();
      // Each end is logged when it happens; waited for, bounded by the bound and a second more. The
      // unnamed stream is waited for too: it is rotated at the same bound, its line a moment apart.
      const unnamed = () => envoy.streamEnds().filter((e) => e.kind === 'http' && e.session === null);
      await waitFor('Envoy to log the rotations and the client end', BOUND_MS + 1000, () =>
        sessions('rotated').length + unnamed().length + tcpEnds(tcpPort).length + sessions('client-ended').length === 4 ? true : undefined,
      );
      clearInterval(tcpTimer);
      const [rotated] = sessions('rotated');
      assert.ok(rotated && endedByDurationLimit(rotated), `max_stream_duration: ${JSON.stringify(rotated)}`);
      assert.equal(rotated.details, 'max_duration_timeout');
      const [tcpEnd] = tcpEnds(tcpPort);
      assert.ok(tcpEnd && endedByDurationLimit(tcpEnd), `max_downstream_connection_duration: ${JSON.stringify(tcpEnd)}`);
      const [clientEnded] = sessions('client-ended');
      assert.ok(clientEnded && !endedByDurationLimit(clientEnded), `the client's end is not a rotation: ${JSON.stringify(clientEnded)}`);
      assert.deepEqual(
        envoy
          .streamEnds()
          .filter((e) => e.kind === 'http')
          .map((e) => e.session ?? '-')
          .sort(),
        ['-', 'client-ended', 'rotated'],
        'every HTTP stream is logged; a request without the header under no session',
      );

      // Held at the kill: no line, however long the log is read after.
      await sse(envoy.trafficUrl, 'held').open;
      process.kill(envoy.pid, 'SIGKILL');
      await envoy.logClosed;
      assert.deepEqual(sessions('held'), [], 'a stream Envoy held when it was killed has no line');
    } finally {
      await envoy.stop();
      await echo.close();
    }
  });
}

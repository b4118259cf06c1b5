import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startEnvoyStandin } from '../support/envoy-standin';
import { httpCall } from './harness/http';

/**
 * A stand-in deviation found by the e2e harness (reported, not fixed here: the stand-in is issue 4's).
 * Envoy, draining, adds `Connection: close` to responses whose headers it encodes after the drain
 * started; a response already under way completes and the connection stays usable until the next
 * response (which carries `Connection: close`) or the drain timeout. The stand-in instead ends the
 * connection as soon as that response completes, without announcing it, so a keep-alive client
 * (HAProxy's server-side connection pool) sending its next request at that instant gets no answer.
 * The harness works around it with `option http-server-close` (test/e2e/harness/haproxy.ts).
 */
test('stand-in: a keep-alive request right after a pre-drain response completes is answered (as Envoy would)', { todo: 'stand-in closes unannounced after a pre-drain response (see header comment)' }, async () => {
  const standin = await startEnvoyStandin({ listenPort: 0, adminPort: 0 });
  try {
    const answer = await new Promise<string>((resolve, reject) => {
      const sock = connect(standin.listenPort, '127.0.0.1');
      let buf = '';
      let sentSecond = false;
      sock.setEncoding('utf8');
      sock.on('connect', () => sock.write('GET /slow?ms=300 HTTP/1.1\r\nHost: x\r\n\r\n'));
      sock.on('data', (c: string) => {
        buf += c;
        if (!sentSecond && buf.includes('slow 300\n')) {
          sentSecond = true;
          // The first response had no Connection: close, so the connection is reusable.
          sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
        }
        if (sentSecond && /slow 300\n[\s\S]*HTTP\/1\.1 200[\s\S]*ok\n/.test(buf)) resolve(buf);
      });
      sock.on('close', () => resolve(buf));
      sock.on('error', reject);
      setTimeout(() => void httpCall('POST', `${standin.adminUrl}/drain_listeners?graceful`).catch(reject), 100);
      setTimeout(() => { sock.destroy(); resolve(buf); }, 3000).unref();
    });
    assert.doesNotMatch(answer.split('slow 300\n')[0]!, /connection: close/i, 'the first response began before the drain');
    assert.match(answer.split('slow 300\n')[1] ?? '', /HTTP\/1\.1 200/, 'the second request on the reused connection is answered');
  } finally {
    await standin.stop();
  }
});

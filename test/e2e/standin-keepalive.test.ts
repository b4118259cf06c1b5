import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startEnvoyStandin } from '../support/envoy-standin';
import { httpCall } from './harness/http';

/**
 * Found by the e2e harness: Envoy, draining, adds `Connection: close` to responses whose headers it
 * encodes after the drain started; a response already under way completes and its connection stays
 * usable until the next response (which carries `Connection: close`) or the HCM drain_timeout. An
 * earlier stand-in closed the connection as soon as that response completed, unannounced, so a
 * keep-alive client (HAProxy's server-side pool) sending its next request at that instant got no
 * answer: a stand-in artefact that showed as lost requests. This keeps the stand-in honest.
 */
test('stand-in: a keep-alive request right after a pre-drain response completes is answered (as Envoy would)', async () => {
  const standin = await startEnvoyStandin({ listenPort: 0, adminPort: 0, hcmDrainTimeoutMs: 5000 });
  try {
    // A streamed response sends its headers at once, before the drain starts at 100 ms.
    const answer = await new Promise<string>((resolve, reject) => {
      const sock = connect(standin.listenPort, '127.0.0.1');
      let buf = '';
      let sentSecond = false;
      sock.setEncoding('utf8');
      sock.on('connect', () => sock.write('GET /stream?chunks=3&intervalMs=150 HTTP/1.1\r\nHost: x\r\n\r\n'));
      sock.on('data', (c: string) => {
        buf += c;
        if (!sentSecond && buf.includes('\r\n0\r\n\r\n')) {
          sentSecond = true;
          // The first response had no Connection: close, so the connection is reusable.
          sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
        }
        if (sentSecond && /\r\n0\r\n\r\nHTTP\/1\.1 200[\s\S]*ok\n/.test(buf)) resolve(buf);
      });
      sock.on('close', () => resolve(buf));
      sock.on('error', reject);
      setTimeout(() => void httpCall('POST', `${standin.adminUrl}/drain_listeners?graceful`).catch(reject), 100);
      setTimeout(() => { sock.destroy(); resolve(buf); }, 3000).unref();
    });
    const [first, second = ''] = answer.split('\r\n0\r\n\r\n');
    assert.match(first!, /chunk 2/, 'the stream completed');
    assert.doesNotMatch(first!, /connection: close/i, 'the first response began before the drain');
    assert.match(second, /^HTTP\/1\.1 200/, 'the second request on the reused connection is answered');
    assert.match(second, /connection: close/i, 'and that answer announces the close');
  } finally {
    await standin.stop();
  }
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { conformanceTargets } from '../../hc/proxy-targets';
import { httpCall } from '../harness/http';

/**
 * Drain-first's one-more-request window, witnessed on each real Envoy (and held on the stand-in
 * with the same semantics): Envoy acts on a drain only when it encodes a response's headers. A
 * response whose headers went out before the drain carries no `Connection: close`, so its
 * keep-alive connection stays usable, and the next request on it (an LB's pooled connection) is
 * served in full; only that answer announces the close. The e2e runs traced exactly this behind
 * HAProxy (docs/e2e/RESULTS.md): after the listeners stop, in-flight can stay above 0 for about two
 * request lengths.
 */
for (const spec of conformanceTargets()) {
  test(`${spec.label}: a keep-alive connection whose response began before the drain serves one more request, and only that answer says Connection: close`, {
    timeout: 30_000,
  }, async () => {
    const target = await spec.start();
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const sock = connect(target.trafficPort, '127.0.0.1');
        let buf = '';
        let sentSecond = false;
        sock.setEncoding('utf8');
        sock.on('connect', () => sock.write('GET /stream?chunks=4&intervalMs=150 HTTP/1.1\r\nHost: x\r\n\r\n'));
        sock.on('data', (c: string) => {
          buf += c;
          if (!sentSecond && buf.includes('\r\n0\r\n\r\n')) {
            sentSecond = true;
            sock.write('GET /slow?ms=300 HTTP/1.1\r\nHost: x\r\n\r\n');
          }
          if (sentSecond && /\r\n0\r\n\r\nHTTP\/1\.1 \d{3}[\s\S]*\r\n\r\n[\s\S]+/.test(buf)) {
            sock.destroy();
            resolve(buf);
          }
        });
        sock.on('close', () => resolve(buf));
        sock.on('error', reject);
        // The sidecar's drain calls (plain, then graceful) while the stream's headers are already out.
        setTimeout(() => {
          void httpCall('POST', `${target.adminUrl}/drain_listeners`)
            .then(() => httpCall('POST', `${target.adminUrl}/drain_listeners?graceful`))
            .catch(reject);
        }, 200);
        setTimeout(() => {
          sock.destroy();
          resolve(buf);
        }, 10_000).unref();
      });
      const [first, second = ''] = answer.split('\r\n0\r\n\r\n');
      assert.match(first!, /^HTTP\/1\.1 200/, 'the stream was answered');
      assert.doesNotMatch(first!, /connection: close/i, 'its headers went out before the drain');
      assert.match(second, /^HTTP\/1\.1 200/, `the next request on that connection was served after the drain:\n${answer}`);
      assert.match(second, /connection: close/i, 'and its answer announces the close');
    } finally {
      await target.stop();
    }
  });
}

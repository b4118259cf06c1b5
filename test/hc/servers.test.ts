/**
 * The two servers of the real process: methods, paths, bodies, bindings and limits, and probes that
 * stay fast while the poll loop waits on a slow Envoy admin.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startEnvoyStandin, type EnvoyStandin } from '../support/envoy-standin';
import { request } from '../support/http';
import { fastDrainFirst, spawnHc, tempStateFile, type SpawnedHc } from '../support/hc';
import { waitFor } from '../support/wait';

let standin: EnvoyStandin;
let hc: SpawnedHc;

before(async () => {
  standin = await startEnvoyStandin({ hcmDrainTimeoutMs: 100 });
  const config = path.join(path.dirname(tempStateFile()), 'hc.json');
  fs.writeFileSync(config, JSON.stringify({ envoyAdminTimeoutSeconds: 2, faultAfterFailures: 10, terminationWitness: { required: false } }));
  hc = await spawnHc(['--config', config, ...fastDrainFirst(standin.adminUrl)]);
  await waitFor('OPEN', 5_000, async () => (await hc.get('/health_check.html')).status === 200);
});

after(async () => {
  await hc.stop();
  await standin.stop();
});

/** Sends raw bytes and returns the status line and body of the answer. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let data = '';
    socket.setTimeout(3000, () => socket.destroy(new Error('raw request timed out')));
    socket.on('data', (c: Buffer) => (data += c.toString()));
    socket.on('end', () => resolve(data));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
  });
}

const port = (url: string) => Number(new URL(url).port);

describe('health port', () => {
  test('GET and HEAD only (405 with Allow), unknown paths 404, body = state name', async () => {
    const post = await request(`${hc.healthUrl}/health_check.html`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
    assert.equal((await request(`${hc.healthUrl}/drain`)).status, 404, 'nothing state-changing lives here');
    assert.equal((await request(`${hc.healthUrl}/wait-closed`)).status, 404, 'the witness has a port of its own');
    assert.equal((await request(`${hc.healthUrl}/nope`, { method: 'POST' })).status, 404);
    const head = await request(`${hc.healthUrl}/health_check.html`, { method: 'HEAD' });
    assert.deepEqual([head.status, head.body], [200, '']);
    const get = await request(`${hc.healthUrl}/health_check.html?probe=1`);
    assert.deepEqual([get.status, get.body, get.headers['cache-control']], [200, 'OPEN', 'no-store']);
  });

  test('an absolute-form request target is accepted (RFC 9112 §3.2.2), whatever the host (attack 15)', async () => {
    const lb = await raw(
      port(hc.healthUrl),
      'GET http://gateway.example:30180/health_check.html?x=1 HTTP/1.1\r\nHost: gateway.example:30180\r\nConnection: close\r\n\r\n',
    );
    assert.match(lb, /^HTTP\/1\.1 200 [^]*\r\n\r\nOPEN$/);
    const bare = await raw(port(hc.healthUrl), 'GET http://gateway.example HTTP/1.1\r\nHost: gateway.example\r\nConnection: close\r\n\r\n');
    assert.match(bare, /^HTTP\/1\.1 404 /, 'no path: /, which is not an endpoint');
    const state = await raw(port(hc.controlUrl), 'GET http://127.0.0.1/state HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    assert.match(state, /^HTTP\/1\.1 200 /);
  });

  test('request bodies are refused without being read: 413 (Content-Length), 400 (chunked)', async () => {
    const withLength = await raw(port(hc.healthUrl), 'GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello');
    assert.match(withLength, /^HTTP\/1\.1 413 /);
    const chunked = await raw(port(hc.healthUrl), 'GET /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
    assert.match(chunked, /^HTTP\/1\.1 400 /);
  });

  test('a Transfer-Encoding after 40 headers is seen: the request is refused and its body not read (attack 11)', async () => {
    const headers = Array.from({ length: 40 }, (_, i) => `X-H${i}: v\r\n`).join('');
    const socket = net.connect(port(hc.healthUrl), '127.0.0.1');
    let answer = '';
    let sent = 0;
    socket.on('data', (c: Buffer) => (answer += c.toString()));
    socket.on('error', () => {});
    const closed = new Promise((r) => socket.once('close', r));
    await new Promise((r) => socket.once('connect', r));
    socket.write(`GET /health HTTP/1.1\r\nHost: x\r\n${headers}Transfer-Encoding: chunked\r\n\r\n`);
    await waitFor('the answer to the headers', 2000, () => answer !== '');
    assert.match(answer, /^HTTP\/1\.1 431 /);
    // Stream a chunked body of up to 256 MiB: the server must close long before it is all sent.
    const chunk = `100000\r\n${'a'.repeat(0x100000)}\r\n`;
    while (sent < 256 * 1024 * 1024 && !socket.destroyed && socket.writable) {
      sent += chunk.length;
      if (!socket.write(chunk)) await Promise.race([new Promise((r) => socket.once('drain', r)), closed]);
    }
    await closed;
    assert.ok(sent < 64 * 1024 * 1024, `the server stopped reading after ${(sent / 1048576).toFixed(0)} MiB`);
  });

  test('oversized headers are refused', async () => {
    const answer = await raw(port(hc.healthUrl), `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 431 /);
  });
});

/**
 * Sends one request and resolves with the first whole answer (headers and Content-Length body),
 * without waiting for the server to close: an LB's probe may keep its connection open.
 */
function firstAnswer(port: number, bytes: string, head = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let data = '';
    const done = (answer: string) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(3000, () => socket.destroy(new Error(`no whole answer within 3 s: ${JSON.stringify(data)}`)));
    socket.on('data', (c: Buffer) => {
      data += c.toString();
      const end = data.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = head ? 0 : Number(/\r\ncontent-length: *(\d+)/i.exec(data.slice(0, end))?.[1] ?? 0);
      if (data.length >= end + 4 + length) done(data.slice(0, end + 4 + length));
    });
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
  });
}

describe("probes without a Host header (NetScaler's HTTP monitor with only -httpRequest, custom probes)", () => {
  // Node >= 20 answers 400 to these unless told otherwise: every LB member would stay DOWN.
  const requests = (method: string, path: string) => ({
    'HTTP/1.1 without Host': `${method} ${path} HTTP/1.1\r\n\r\n`,
    'HTTP/1.1 without Host, User-Agent only': `${method} ${path} HTTP/1.1\r\nUser-Agent: NS-MONITOR\r\n\r\n`,
    'HTTP/1.0 without Host': `${method} ${path} HTTP/1.0\r\n\r\n`,
  });

  test('the health port answers the LB, readiness and liveness endpoints as usual (GET and HEAD)', async () => {
    for (const [what, bytes] of Object.entries(requests('GET', '/health_check.html'))) {
      assert.match(await firstAnswer(port(hc.healthUrl), bytes), /^HTTP\/1\.1 200 [^]*\r\n\r\nOPEN$/, what);
    }
    for (const p of ['/health', '/live']) {
      for (const [what, bytes] of Object.entries(requests('GET', p)))
        assert.match(await firstAnswer(port(hc.healthUrl), bytes), /^HTTP\/1\.1 200 /, `${p}: ${what}`);
    }
    for (const [what, bytes] of Object.entries(requests('HEAD', '/health_check.html'))) {
      assert.match(await firstAnswer(port(hc.healthUrl), bytes, true), /^HTTP\/1\.1 200 /, `HEAD: ${what}`);
    }
    assert.match(await firstAnswer(port(hc.healthUrl), 'GET /nope HTTP/1.1\r\n\r\n'), /^HTTP\/1\.1 404 /, 'routed by path, not refused');
  });

  test('the witness port holds a Host-less /wait-closed like any other', async () => {
    for (const [what, bytes] of Object.entries(requests('GET', '/wait-closed'))) {
      const before = (await hc.state())['waiters'] as number;
      const socket = net.connect(port(hc.witnessUrl), '127.0.0.1', () => socket.write(bytes));
      let answer = '';
      socket.on('data', (c: Buffer) => (answer += c.toString()));
      socket.on('error', () => {});
      try {
        await waitFor(`${what}: held as a waiter`, 5_000, async () => answer === '' && ((await hc.state())['waiters'] as number) === before + 1);
      } finally {
        socket.destroy();
      }
      assert.equal(answer, '', `${what}: not refused`);
      await waitFor('the waiter let go', 5_000, async () => ((await hc.state())['waiters'] as number) === before);
    }
    assert.match(await firstAnswer(port(hc.witnessUrl), 'GET /nope HTTP/1.1\r\n\r\n'), /^HTTP\/1\.1 404 /);
  });

  test('the metrics and control ports too (a scraper or a script without Host)', async () => {
    for (const [what, bytes] of Object.entries(requests('GET', '/metrics'))) {
      assert.match(await firstAnswer(port(hc.metricsUrl), bytes), /^HTTP\/1\.1 200 [^]*gracegate_hc_state/, `metrics: ${what}`);
    }
    for (const [what, bytes] of Object.entries(requests('GET', '/state'))) {
      assert.match(await firstAnswer(port(hc.controlUrl), bytes), /^HTTP\/1\.1 200 /, `control: ${what}`);
    }
  });
});

describe('control port', () => {
  test('bound to 127.0.0.1 only', async () => {
    const listening = hc.logs.find((l) => l['msg'] === 'listening')!;
    assert.equal(listening['controlHost'], '127.0.0.1');
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal);
    if (external) {
      await assert.rejects(request(`http://${external.address}:${port(hc.controlUrl)}/state`, { timeoutMs: 2000 }), /ECONNREFUSED/);
      assert.equal((await request(`http://${external.address}:${port(hc.healthUrl)}/live`)).status, 200, 'the health port is on all interfaces');
    }
  });

  test('methods and paths; /metrics in Prometheus text', async () => {
    assert.equal((await request(`${hc.controlUrl}/drain`)).status, 405);
    assert.equal((await request(`${hc.controlUrl}/state`, { method: 'POST' })).status, 405);
    assert.equal((await request(`${hc.controlUrl}/health`)).status, 404);
    const metrics = await request(`${hc.metricsUrl}/metrics`);
    assert.equal(metrics.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.match(metrics.body, /^# TYPE gracegate_hc_state gauge$/m);
    assert.match(metrics.body, /^gracegate_hc_state\{state="OPEN"\} 1$/m);
    assert.match(metrics.body, /^gracegate_hc_drain_timeouts_total 0$/m);
  });

  test('probes stay fast while the poll waits on a slow admin; /reopen is honest after the drain', async () => {
    await standin.setFault('slow', { delayMs: 400 });
    try {
      const inflight = request(`${standin.trafficUrl}/slow?ms=2500`);
      await waitFor('in flight', 5_000, () => standin.counts().requests === 1);
      await standin.setFault('none');
      assert.equal((await hc.post('/drain')).status, 202);
      await waitFor('drained', 5_000, () => !standin.counts().listening);
      await standin.setFault('slow', { delayMs: 400 });
      const latencies: number[] = [];
      for (let i = 0; i < 40; i++) {
        const t = process.hrtime.bigint();
        const r = await hc.get('/health_check.html');
        latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
        assert.equal(r.status, 200);
      }
      assert.ok(Math.max(...latencies) < 400, `no probe waited on the admin call (max ${Math.max(...latencies).toFixed(1)} ms)`);
      const reopen = await hc.post('/reopen');
      assert.equal(reopen.status, 409);
      assert.equal(JSON.parse(reopen.body).reason, 'Envoy listeners are stopped; a drain cannot be undone: restart the pod');
      await standin.setFault('none');
      await inflight;
      await waitFor('CLOSED', 5000, async () => (await hc.get('/health')).status === 503);
      const state = await hc.state();
      assert.equal(state['finished'], true);
      assert.deepEqual(
        (state['events'] as { id: number; name: string }[]).map((e) => `${e.id} ${e.name}`),
        ['1 lb-health-fails', '2 readiness-fails', '3 proxy-drain-starts', '4 in-flight-zero', '5 lb-marks-down', '6 lb-resets-sessions'],
      );
    } finally {
      await standin.setFault('none');
    }
  });
});

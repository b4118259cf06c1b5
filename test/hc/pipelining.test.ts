/**
 * Issue 34, attack 3: 2,000 GETs pipelined without reading on each of 28 connections to the health
 * port (each attacker within the per-source limits) used to time out 8 of 67 LB-style probes, and
 * 112 connections all of them; the witness and metrics ports starved the health port the same way.
 * Now every port takes one request per connection at a time: a pipelined request closes its
 * connection unanswered, and Node's parser builds no request out of the rest of what it sent.
 * How long the probes take under attack is measured in bench/hc-pipeline-bench.ts (docs/hc.md);
 * here, what the sidecar does: the attacker's connections are closed after at most one answer, the
 * server never sees the rest, and the LB's probe gets its 200 while the attack runs.
 */
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startEnvoyStandin, type EnvoyStandin } from '../support/envoy-standin';
import { request } from '../support/http';
import { spawnHc, tempStateFile, type SpawnedHc } from '../support/hc';
import { waitFor } from '../support/wait';

let standin: EnvoyStandin;
let hc: SpawnedHc;

before(async () => {
  standin = await startEnvoyStandin({});
  hc = await spawnHc(['--envoy-admin', standin.adminUrl, '--state-file', tempStateFile(), '--poll-interval', '0.2']);
  await waitFor('OPEN', 5_000, async () => (await hc.get('/health_check.html')).status === 200);
});

after(async () => {
  await hc.stop();
  await standin.stop();
});

interface Attacker {
  readonly closed: Promise<void>;
  answers(): number;
  destroy(): void;
}

/** One connection from `from` that writes `n` pipelined GETs of `path` at once and counts the answers. */
function pipeline(url: string, path: string, n: number, from: string): Attacker {
  const u = new URL(url);
  let answers = 0;
  let tail = '';
  const socket = net.connect({ port: Number(u.port), host: '127.0.0.1', localAddress: from }, () =>
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(n)),
  );
  socket.on('data', (c: Buffer) => {
    const text = tail + c.toString('latin1');
    answers += text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0;
    tail = text.slice(-16);
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { closed, answers: () => answers, destroy: () => socket.destroy() };
}

/** 28 connections over 4 addresses: within every port's per-source limit (8 at the least). */
const sources = (i: number) => `127.0.5.${(i % 4) + 1}`;

for (const [port, url, path] of [
  ['health', () => hc.healthUrl, '/health_check.html'],
  ['metrics', () => hc.metricsUrl, '/metrics'],
  ['witness', () => hc.witnessUrl, '/wait-closed'],
] as const) {
  describe(`2,000 pipelined GETs on each of 28 connections to the ${port} port`, () => {
    test('each connection is closed after at most one answer, and the probes get their 200 meanwhile', async () => {
      const attackers = Array.from({ length: 28 }, (_, i) => pipeline(url(), path, 2_000, sources(i)));
      try {
        const probes = await Promise.all(
          Array.from({ length: 5 }, () => request(`${hc.healthUrl}/health_check.html`, { timeoutMs: 5_000 }).then((r) => r.status)),
        );
        assert.deepEqual(probes, [200, 200, 200, 200, 200]);
        await Promise.all(attackers.map((a) => a.closed));
        const most = Math.max(...attackers.map((a) => a.answers()));
        assert.ok(most <= 1, `a pipelining connection got ${most} answers`);
      } finally {
        attackers.forEach((a) => a.destroy());
      }
      assert.equal((await hc.state())['waiters'], 0, 'no waiter outlives its connection');
    });
  });
}

describe('one request at a time, not one request per connection', () => {
  test('keep-alive requests sent one after the other are all answered on one connection', async () => {
    const socket = net.connect({ port: Number(new URL(hc.healthUrl).port), host: '127.0.0.1' });
    socket.on('error', () => {});
    let data = '';
    socket.on('data', (c: Buffer) => (data += c.toString()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    try {
      for (let i = 1; i <= 3; i++) {
        socket.write('GET /health_check.html HTTP/1.1\r\nHost: x\r\n\r\n');
        await waitFor(`answer ${i}`, 5_000, () => (data.match(/HTTP\/1\.1 200 /g)?.length ?? 0) === i);
      }
      assert.equal(socket.destroyed, false);
    } finally {
      socket.destroy();
    }
  });
});

describe("what a closed pipelining connection already sent never reaches the server's handler", () => {
  test("Node's parser makes no request of the rest (the saving dropTheRest relies on Node's own parser for)", async () => {
    const { createBoundedServer, listen, closeServer, send } = await import('../../src/hc/http-limits');
    let handled = 0;
    let requests = 0;
    const server = createBoundedServer({ total: 16, perSource: 16 }, (_req, res) => {
      handled++;
      send(res, 200, 'ok');
    });
    server.on('request', () => requests++);
    const port = await listen(server, 0, '127.0.0.1');
    try {
      const a = pipeline(`http://127.0.0.1:${port}`, '/', 2_000, '127.0.0.1');
      await a.closed;
      assert.equal(handled, 1, 'the first request only');
      assert.ok(requests <= 2, `${requests} requests parsed out of a closed connection`);
    } finally {
      await closeServer(server);
    }
  });
});

describe('a source that pipelined', () => {
  test('has its next connections closed on accept, unanswered; other sources are served', async () => {
    const { createBoundedServer, listen, closeServer, send } = await import('../../src/hc/http-limits');
    const server = createBoundedServer({ total: 16, perSource: 16 }, (_req, res) => send(res, 200, 'ok'));
    const port = await listen(server, 0, '127.0.0.1');
    const url = `http://127.0.0.1:${port}/`;
    try {
      await pipeline(url, '/', 10, '127.0.9.1').closed;
      await assert.rejects(request(url, { localAddress: '127.0.9.1', timeoutMs: 5_000 }), /ECONNRESET|socket hang up/);
      assert.equal((await request(url, { localAddress: '127.0.9.2' })).status, 200);
    } finally {
      await closeServer(server);
    }
  });
});

describe('the penalty of a source that pipelined', () => {
  test('is renewed by each connect during it, so a source that keeps reconnecting never gets back in; it ends once the source stops', async () => {
    const http = await import('node:http');
    const { admitConnections, PIPELINING_PENALTY_MS } = await import('../../src/hc/connection-admission');
    const { listen, closeServer, send } = await import('../../src/hc/http-limits');
    let clock = 1_000_000;
    const server = http.createServer((req, res) => {
      if (admission.take(req, res)) send(res, 200, 'ok');
    });
    const admission = admitConnections(server, { total: 16, perSource: 16 }, () => clock);
    const port = await listen(server, 0, '127.0.0.1');
    const url = `http://127.0.0.1:${port}/`;
    const from = '127.0.9.3';
    const refused = () => assert.rejects(request(url, { localAddress: from, timeoutMs: 5_000, agent: false }), /ECONNRESET|socket hang up/);
    try {
      await pipeline(url, '/', 10, from).closed;
      assert.equal(admission.pipelined, 1);
      // Reconnecting within each penalty keeps it running, well past one penalty from the pipelining.
      for (let k = 1; k <= 3; k++) {
        clock += PIPELINING_PENALTY_MS * 0.9;
        await refused();
      }
      // Then the source stays away for a whole penalty: it is served again.
      clock += PIPELINING_PENALTY_MS + 1;
      assert.equal((await request(url, { localAddress: from, agent: false })).status, 200);
    } finally {
      await closeServer(server);
    }
  });
});

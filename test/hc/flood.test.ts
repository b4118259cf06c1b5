/**
 * The health port under a connection flood (issue 18, attack 3): 256 slowloris connections or a
 * pile of connects that send nothing used to take every slot, and the LB's next probe was reset.
 * Now the newest connection always gets in and the flood's own oldest idle connections give way
 * (src/hc/connection-admission.ts). Latency under a reconnecting flood is measured in
 * bench/hc-flood-bench.ts (docs/hc.md), not here.
 */
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { HEALTH_CONNECTION_LIMITS } from '../../src/hc/health-server';
import { startEnvoyStandin, type EnvoyStandin } from '../support/envoy-standin';
import { request } from '../support/http';
import { spawnHc, tempStateFile, type SpawnedHc } from '../support/hc';
import { waitFor } from '../support/wait';

let standin: EnvoyStandin;
let hc: SpawnedHc;
let port: number;

before(async () => {
  standin = await startEnvoyStandin({});
  hc = await spawnHc(['--envoy-admin', standin.adminUrl, '--state-file', tempStateFile(), '--poll-interval', '0.2']);
  port = Number(new URL(hc.healthUrl).port);
  await waitFor('OPEN', 5_000, async () => (await hc.get('/health_check.html')).status === 200);
});

after(async () => {
  await hc.stop();
  await standin.stop();
});

interface Flood {
  readonly sockets: net.Socket[];
  readonly closedAt: Map<net.Socket, number>;
  end(): void;
}

/** `n` connections from `from`, opened one after the other; slowloris ones send an unfinished request. */
async function flood(n: number, from: string, slowloris: boolean): Promise<Flood> {
  const sockets: net.Socket[] = [];
  const closedAt = new Map<net.Socket, number>();
  for (let i = 0; i < n; i++) {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
    socket.on('error', () => {});
    socket.on('close', () => closedAt.set(socket, Date.now()));
    socket.resume(); // read, so the server's close is seen
    await new Promise<void>((resolve) => {
      socket.once('connect', () => resolve());
      socket.once('close', () => resolve());
    });
    if (slowloris && !socket.destroyed) socket.write('GET /health_check.html HTTP/1.1\r\nHost: x\r\n');
    sockets.push(socket);
  }
  return { sockets, closedAt, end: () => sockets.forEach((s) => s.destroy()) };
}

async function probesAllAnswered(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const r = await request(`${hc.healthUrl}/health_check.html`, { timeoutMs: 2000 });
    assert.deepEqual([r.status, r.body], [200, 'OPEN'], `probe ${i}`);
  }
}

describe('a connection flood on the health port', () => {
  test('256 slowloris connections from another address: every probe is answered; the flood keeps 32 connections', async () => {
    const f = await flood(256, '127.0.0.2', true);
    try {
      await probesAllAnswered(10);
      await waitFor(
        'the flood cut to its per-source share',
        5_000,
        () => f.sockets.filter((s) => !f.closedAt.has(s)).length <= HEALTH_CONNECTION_LIMITS.perSource,
      );
      const open = f.sockets.filter((s) => !f.closedAt.has(s));
      assert.deepEqual(open, f.sockets.slice(-open.length), 'the oldest gave way, the newest stayed');
    } finally {
      f.end();
    }
  });

  test("connections that send nothing, from the probes' own address: the oldest give way, probes are answered", async () => {
    const f = await flood(300, '127.0.0.1', false);
    try {
      await probesAllAnswered(10);
    } finally {
      f.end();
    }
  });

  test("from many addresses up to the server's total: the heaviest source gives way, a light one is kept", async () => {
    // A light source holding one idle keep-alive connection (like an LB node between probes) ...
    const light = await flood(1, '127.0.0.3', false);
    // ... then 9 heavy sources x 31 connections: 280 in all, above the total of 256.
    const heavy: Flood[] = [];
    try {
      for (let i = 0; i < 9; i++) heavy.push(await flood(31, `127.0.1.${i + 1}`, false));
      const open = heavy.flatMap((f) => f.sockets.filter((s) => !f.closedAt.has(s)));
      await waitFor(
        'at most 256 held',
        5_000,
        () => heavy.flatMap((f) => f.sockets.filter((s) => !f.closedAt.has(s))).length + 1 <= HEALTH_CONNECTION_LIMITS.total,
      );
      assert.ok(open.length > 0);
      assert.equal(light.closedAt.size, 0, 'the light source kept its connection');
      await probesAllAnswered(3);
    } finally {
      light.end();
      heavy.forEach((f) => f.end());
    }
  });

  test('a request that never finishes its headers is closed before the old 5 s limit', async () => {
    const f = await flood(1, '127.0.0.4', true);
    const opened = Date.now();
    try {
      await waitFor('closed by the server', 6_000, () => f.closedAt.size === 1, 50);
      const after = f.closedAt.get(f.sockets[0]!)! - opened;
      assert.ok(after < 4_500, `closed after ${after} ms (headers timeout 2 s, checked every 1 s)`);
    } finally {
      f.end();
    }
  });
});

/**
 * The termination witness from outside the pod (issue 18, attack 4): held /wait-closed requests
 * from anyone reaching the health port used to count as the witness (a sidecar restart then
 * drained a healthy pod) and, 32 of them, made the proxy's real preStop get 429. The witness now
 * has a port of its own that no Service exposes, and a full set of waiters displaces the
 * heaviest source's oldest instead of refusing the newest. Outside clients are played from other
 * loopback addresses (127.0.0.2 …), the kubelet's hook from 127.0.0.1. The caps are a second line
 * behind the source check (test/hc/witness-source.test.ts): here the config's allowFrom lets the
 * outside addresses in, as a CNI that hides the node's address behind many would.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MAX_WAITERS, MAX_WAITERS_PER_SOURCE } from '../../src/hc/waiters';
import { startEnvoyStandin, type EnvoyStandin } from '../support/envoy-standin';
import { request } from '../support/http';
import { fastDrainFirst, spawnHc, tempStateFile, type SpawnedHc } from '../support/hc';
import { waitFor } from '../support/wait';

let standin: EnvoyStandin;
let hc: SpawnedHc;

before(async () => {
  standin = await startEnvoyStandin({ hcmDrainTimeoutMs: 100 });
  const config = path.join(path.dirname(tempStateFile()), 'hc.json');
  fs.writeFileSync(config, JSON.stringify({ terminationWitness: { required: true, windowSeconds: 0.5, allowFrom: ['127.0.0.2', '127.0.3.0/24'] } }));
  hc = await spawnHc(['--config', config, ...fastDrainFirst(standin.adminUrl)]);
  await waitFor('OPEN', 5_000, async () => (await hc.get('/health_check.html')).status === 200);
});

after(async () => {
  await hc.stop();
  await standin.stop();
});

interface Held {
  readonly socket: net.Socket;
  answer(): string;
}

/** A GET /wait-closed held open from `from`. */
function hold(url: string, from: string): Held {
  const u = new URL(url);
  let data = '';
  const socket = net.connect({ port: Number(u.port), host: '127.0.0.1', localAddress: from }, () =>
    socket.write('GET /wait-closed HTTP/1.1\r\nHost: x\r\n\r\n'),
  );
  socket.on('data', (c: Buffer) => (data += c.toString()));
  socket.on('error', () => {});
  return { socket, answer: () => data };
}

const waiters = async () => (await hc.state())['waiters'] as number;

describe('the termination witness', () => {
  test("the health port (the LB's, the NodePort's) has no /wait-closed: nothing there can hold or lend the witness", async () => {
    const outside = Array.from({ length: 20 }, () => hold(hc.healthUrl, '127.0.0.2'));
    try {
      await waitFor('all answered', 5_000, () => outside.every((h) => h.answer() !== ''));
      assert.ok(outside.every((h) => /^HTTP\/1\.1 404 /.test(h.answer())));
      assert.equal(await waiters(), 0);
      const drain = await hc.post('/drain');
      assert.deepEqual(JSON.parse(drain.body), { draining: false, state: 'OPEN', reason: 'no pod termination witnessed (container restart?), not draining' });
      assert.equal((await hc.get('/health_check.html')).status, 200, 'a sidecar restart does not drain the pod');
    } finally {
      outside.forEach((h) => h.socket.destroy());
    }
  });

  test("waiters from outside on the witness port cannot refuse the kubelet's hook: one source keeps 4, many sources are displaced", async () => {
    // Twice a source's share of waiters (and within its share of connections, WITNESS_CONNECTION_LIMITS).
    const one = Array.from({ length: 2 * MAX_WAITERS_PER_SOURCE }, () => hold(hc.witnessUrl, '127.0.0.2'));
    const many: Held[] = [];
    try {
      await waitFor(
        `${MAX_WAITERS_PER_SOURCE} waiting from 127.0.0.2`,
        5_000,
        async () => one.filter((h) => h.answer() !== '').length === MAX_WAITERS_PER_SOURCE && (await waiters()) === MAX_WAITERS_PER_SOURCE,
      );
      assert.ok(one.filter((h) => h.answer() !== '').every((h) => /^HTTP\/1\.1 503 [^]*OPEN: displaced by a newer \/wait-closed$/.test(h.answer())));
      for (let i = 0; i < 10; i++) for (let j = 0; j < MAX_WAITERS_PER_SOURCE; j++) many.push(hold(hc.witnessUrl, `127.0.3.${i + 1}`));
      await waitFor('the waiters are full', 5_000, async () => (await waiters()) === MAX_WAITERS);
      const kubelet = hold(hc.witnessUrl, '127.0.0.1');
      await waitFor(
        "the kubelet's hook is waiting",
        5_000,
        async () =>
          (await hc.state())['waiters'] === MAX_WAITERS && (await request(`${hc.metricsUrl}/metrics`)).body.includes('gracegate_hc_wait_closed_waiters 32'),
      );
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(kubelet.answer(), '', 'not refused, not displaced: still waiting');
      kubelet.socket.destroy();
    } finally {
      [...one, ...many].forEach((h) => h.socket.destroy());
    }
    await waitFor('waiters gone', 5_000, async () => (await waiters()) === 0);
  });
});

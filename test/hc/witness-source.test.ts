/**
 * Issue 34, attacks 1 and 2, against the real sidecar process: a caller on the pod network used to
 * drain any gateway with two GETs on the witness port (hold /wait-closed, then /hc-stopping), and
 * /wait-closed requests pipelined on one connection left their waiters behind when it closed, so
 * a later POST /drain (what a restart of the hc alone sends) counted them as the pod's termination.
 * The kubelet's hook is played from 127.0.0.1 (loopback, always a kubelet source) and from the
 * address GRACEGATE_HOST_IPS names (as the downward API's status.hostIPs does); the outsider from
 * 127.0.0.2.
 */
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { HOST_IPS_ENV } from '../../src/contract/addresses';
import { NOT_A_KUBELET } from '../../src/hc/witness-server';
import { startEnvoyStandin, type EnvoyStandin } from '../support/envoy-standin';
import { request } from '../support/http';
import { spawnHc, tempStateFile, type SpawnedHc } from '../support/hc';
import { waitFor } from '../support/wait';

let standin: EnvoyStandin;
let hc: SpawnedHc;

before(async () => {
  standin = await startEnvoyStandin({ hcmDrainTimeoutMs: 100 });
  // health-first: the LB's answer turns 503 the moment a sequence starts.
  hc = await spawnHc(['--envoy-admin', standin.adminUrl, '--state-file', tempStateFile(), '--poll-interval', '0.05', '--lb-buffer', '0.5'], 5_000, {
    [HOST_IPS_ENV]: '127.0.0.5,fd00::5',
  });
  await waitFor('OPEN', 5_000, async () => (await hc.get('/health_check.html')).status === 200);
});

after(async () => {
  await hc.stop();
  await standin.stop();
});

interface Raw {
  readonly socket: net.Socket;
  readonly closed: Promise<void>;
  text(): string;
  /** Answers received (status lines). */
  answers(): number;
}

/** A raw connection from `from` that writes `requests` (one write: pipelined when several). */
function raw(url: string, from: string, requests: string): Raw {
  const u = new URL(url);
  let data = '';
  const socket = net.connect({ port: Number(u.port), host: '127.0.0.1', localAddress: from }, () => socket.write(requests));
  socket.on('data', (c: Buffer) => (data += c.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, closed, text: () => data, answers: () => data.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0 };
}

const get = (path: string, n = 1) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(n);
const waiters = async () => (await hc.state())['waiters'] as number;
const refusedMetric = async () => Number(/^gracegate_hc_witness_refused_total (\d+)$/m.exec((await request(`${hc.metricsUrl}/metrics`)).body)?.[1]);

describe("only the kubelet's hooks count", () => {
  test('two GETs from the pod network drain nothing: /wait-closed and /hc-stopping from a stranger are answered 403', async () => {
    const before = await refusedMetric();
    const held = raw(hc.witnessUrl, '127.0.0.2', get('/wait-closed'));
    await held.closed;
    assert.match(held.text(), /^HTTP\/1\.1 403 /);
    assert.ok(held.text().endsWith(NOT_A_KUBELET));
    const stopping = await request(`${hc.witnessUrl}/hc-stopping`, { localAddress: '127.0.0.2' });
    assert.equal(stopping.status, 403);
    assert.equal(await waiters(), 0, 'no waiter from the stranger');
    const state = await hc.state();
    assert.deepEqual([state.state, state.flow], ['OPEN', null], 'no sequence started');
    assert.equal((await hc.get('/health_check.html')).status, 200, 'the LB still hears OPEN');
    assert.equal((await refusedMetric()) - before, 2, 'both counted in gracegate_hc_witness_refused_total');
  });

  test("the node's address (GRACEGATE_HOST_IPS) and loopback are served: their /wait-closed waits", async () => {
    for (const from of ['127.0.0.5', '127.0.0.1']) {
      const held = raw(hc.witnessUrl, from, get('/wait-closed'));
      try {
        await waitFor(`a waiter from ${from}`, 5_000, async () => (await waiters()) === 1);
        assert.equal(held.text(), '', 'still waiting');
      } finally {
        held.socket.destroy();
      }
      await waitFor('its waiter gone with its connection', 5_000, async () => (await waiters()) === 0);
    }
  });

  test('pipelined /wait-closed requests close their connection, and no waiter outlives it: a later /drain has no witness', async () => {
    const piped = raw(hc.witnessUrl, '127.0.0.1', get('/wait-closed', 5));
    await piped.closed;
    assert.equal(piped.answers(), 0, 'closed unanswered');
    await waitFor('no waiter left', 5_000, async () => (await waiters()) === 0);
    // What a restart of the hc alone sends: it must find no witness.
    const drain = await request(`${hc.controlUrl}/drain`, { method: 'POST', timeoutMs: 15_000 });
    const body = JSON.parse(drain.body) as { draining: boolean; reason: string };
    assert.equal(body.draining, false, body.reason);
    assert.equal((await hc.get('/health_check.html')).status, 200);
  });

  test('warnings a stranger causes are rate-limited: 14 connections of 2,000 pipelined requests write a handful of lines', async () => {
    const before = hc.logs.length;
    const attackers = Array.from({ length: 14 }, (_, i) => raw(hc.witnessUrl, `127.0.4.${i + 1}`, get('/wait-closed', 2_000)));
    await Promise.all(attackers.map((a) => a.closed));
    for (const a of attackers) assert.ok(a.answers() <= 1, `at most one answer per connection, got ${a.answers()}`);
    await waitFor('the metric counted them', 5_000, async () => (await refusedMetric()) >= 16);
    const lines = hc.logs.slice(before).filter((l) => l['level'] === 'warn');
    assert.ok(lines.length <= 2, `${lines.length} warnings: ${JSON.stringify(lines.slice(0, 3))}`);
  });
});

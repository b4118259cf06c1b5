/**
 * The three sequences end to end: the real `gracegate hc` process against the Envoy stand-in, over
 * real HTTP. Status codes and bodies at each step, what the proxy does, the order of the events.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { startEnvoyStandin, type EnvoyStandin } from '../support/envoy-standin';
import { eventTimes, request, spawnHc, tempStateFile, waitFor, type SpawnedHc } from './helpers';

const FAST = ['--poll-interval', '0.05', '--drain-timeout', '5'];

async function withRig(sequence: string, extra: string[], body: (s: EnvoyStandin, hc: SpawnedHc) => Promise<void>): Promise<void> {
  const standin = await startEnvoyStandin({ hcmDrainTimeoutMs: 100 });
  let hc: SpawnedHc | undefined;
  try {
    hc = await spawnHc(['--envoy-admin', standin.adminUrl, '--sequence', sequence, '--state-file', tempStateFile(), ...FAST, ...extra]);
    await waitFor('OPEN', async () => (await hc!.get('/health_check.html')).status === 200);
    await body(standin, hc);
  } finally {
    await hc?.stop();
    await standin.stop();
  }
}

async function answers(hc: SpawnedHc) {
  const [lb, ready, live] = await Promise.all([hc.get('/health_check.html'), hc.get('/health'), hc.get('/live')]);
  return { lb: `${lb.status} ${lb.body}`, ready: `${ready.status} ${ready.body}`, live: `${live.status} ${live.body}` };
}

function drainCalls(s: EnvoyStandin): string[] {
  return s.adminCalls.filter((c) => c.path.startsWith('/drain_listeners')).map((c) => `${c.method} ${c.path}`);
}

describe('drain-first', () => {
  test('stops new connects at once, keeps 200 until in-flight is 0, then 503, readiness one buffer later', async () => {
    await withRig('drain-first', ['--lb-buffer', '1'], async (s, hc) => {
      // Margins of a second or more: this runs beside the e2e tests on a busy machine.
      const inflight = request(`${s.trafficUrl}/slow?ms=1500`);
      await waitFor('the slow request in flight', () => s.counts().requests === 1);
      const drain = await hc.post('/drain?witness=none');
      assert.equal(drain.status, 202);
      assert.equal(JSON.parse(drain.body).draining, true);

      assert.deepEqual(await answers(hc), { lb: '200 DRAINING', ready: '200 DRAINING', live: '200 DRAINING' });
      await waitFor('listeners stopped', () => !s.counts().listening);
      await assert.rejects(request(`${s.trafficUrl}/`), /ECONNREFUSED/, 'new connections are refused: the LB re-sends them');
      assert.deepEqual(drainCalls(s), ['POST /drain_listeners?graceful', 'POST /drain_listeners']);
      assert.equal((await hc.get('/health_check.html')).status, 200, 'still 200 while the request is in flight');

      const done = await inflight;
      assert.equal(done.status, 200, 'the in-flight request completes');
      assert.equal(done.headers.connection, 'close');
      await waitFor('LB 503', async () => (await hc.get('/health_check.html')).body === 'CLOSING', 3000, 10);
      const closing = await answers(hc);
      assert.equal(closing.lb, '503 CLOSING');
      assert.match(closing.ready, /^(200 CLOSING|503 CLOSED)$/, 'readiness fails with CLOSED, never before');
      await waitFor('CLOSED', async () => (await hc.get('/health')).status === 503, 3000);
      assert.deepEqual(await answers(hc), { lb: '503 CLOSED', ready: '503 CLOSED', live: '200 CLOSED' });

      const state = await hc.state();
      const e = eventTimes(state);
      assert.equal(state['state'], 'CLOSED');
      assert.ok(e[3]!.at! <= e[4]!.at! && e[4]!.at! <= e[1]!.at! && e[1]!.at! < e[2]!.at!, `[3] <= [4] <= [1] < [2]: ${JSON.stringify(e)}`);
      assert.ok(e[4]!.at! >= s.counts().zeroSince!, '[4] is not before the stand-in really reached 0');
      assert.ok(e[2]!.at! - e[1]!.at! >= 1000, 'readiness fails one LB buffer after the LB endpoint');
      assert.equal(e[5]!.estimated, true);
      assert.equal(e[6]!.estimated, true);
      assert.equal(e[5]!.at, e[1]!.at! + 1000);
    });
  });
});

describe('health-first', () => {
  test('503 at once while the proxy still accepts, the drain after the buffer, readiness at 0', async () => {
    await withRig('health-first', ['--lb-buffer', '1'], async (s, hc) => {
      assert.equal((await hc.post('/drain?witness=none')).status, 202);
      assert.deepEqual(await answers(hc), { lb: '503 CLOSING', ready: '200 CLOSING', live: '200 CLOSING' });
      assert.equal((await request(`${s.trafficUrl}/`)).status, 200, 'the proxy keeps accepting while the LB notices');
      assert.deepEqual(drainCalls(s), []);
      const inflight = request(`${s.trafficUrl}/slow?ms=1800`);
      await waitFor('DRAINING', async () => (await hc.get('/health_check.html')).body === 'DRAINING', 3000, 10);
      assert.deepEqual(await answers(hc), { lb: '503 DRAINING', ready: '200 DRAINING', live: '200 DRAINING' });
      await waitFor('listeners stopped', () => !s.counts().listening);
      assert.deepEqual(drainCalls(s), ['POST /drain_listeners?graceful', 'POST /drain_listeners']);
      assert.equal((await inflight).status, 200);
      await waitFor('CLOSED', async () => (await hc.get('/health')).status === 503, 3000);
      assert.deepEqual(await answers(hc), { lb: '503 CLOSED', ready: '503 CLOSED', live: '200 CLOSED' });
      const e = eventTimes(await hc.state());
      assert.ok(e[1]!.at! < e[3]!.at! && e[3]!.at! < e[4]!.at! && e[4]!.at! <= e[2]!.at!, `[1] < [3] < [4] <= [2]: ${JSON.stringify(e)}`);
      assert.ok(e[3]!.at! - e[1]!.at! >= 1000);
    });
  });
});

describe('soft-drain', () => {
  test('the soft status and body first, then the drain, then 503 at 0', async () => {
    const config = path.join(path.dirname(tempStateFile()), 'hc.json');
    fs.writeFileSync(config, JSON.stringify({ softSignal: { status: 404, body: 'TROFS' }, terminationWitness: { required: false } }));
    await withRig('soft-drain', ['--config', config, '--lb-buffer', '1'], async (s, hc) => {
      const inflight = request(`${s.trafficUrl}/slow?ms=2500`);
      await waitFor('in flight', () => s.counts().requests === 1);
      assert.equal((await hc.post('/drain')).status, 202, 'witness not required by this config');
      assert.deepEqual(await answers(hc), { lb: '404 TROFS', ready: '200 CLOSING', live: '200 CLOSING' });
      await waitFor('DRAINING', async () => (await hc.state())['state'] === 'DRAINING', 3000, 10);
      assert.equal((await hc.get('/health_check.html')).status, 404, 'still the soft status while draining');
      assert.equal((await inflight).status, 200);
      await waitFor('CLOSED', async () => (await hc.get('/health_check.html')).status === 503, 3000);
      assert.deepEqual(await answers(hc), { lb: '503 CLOSED', ready: '503 CLOSED', live: '200 CLOSED' });
      const e = eventTimes(await hc.state());
      assert.equal(e[1]!.note, 'soft signal 404');
      assert.ok(e[1]!.at! < e[3]!.at! && e[3]!.at! < e[4]!.at! && e[4]!.at! <= e[2]!.at!);
    });
  });
});

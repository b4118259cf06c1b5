/**
 * The three sequences end to end: the real `gracegate hc` process against the stand-in and against
 * each pinned real Envoy (Istio-gateway-like bootstrap), over real HTTP. Status codes and bodies at
 * each step, what the proxy does, the order of the events, and what the sidecar says it used.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { eventTimes, spawnHc, tempStateFile, type SpawnedHc } from '../support/hc';
import { request, type Reply } from '../support/http';
import { waitFor } from '../support/wait';
import { sidecarTargets, takesNewConnections, type ProxyTarget, type ProxyTargetOptions, type TargetSpec } from './proxy-targets';

const FAST = ['--poll-interval', '0.05', '--drain-timeout', '5'];
const DRAIN_CALLS = ['POST /drain_listeners 200', 'POST /drain_listeners?graceful 200'];

async function withRig(
  target: TargetSpec,
  sequence: string,
  extra: string[],
  body: (t: ProxyTarget, hc: SpawnedHc) => Promise<void>,
  options: ProxyTargetOptions = {},
): Promise<void> {
  const proxy = await target.start({ hcmDrainTimeoutMs: 300, ...options });
  let hc: SpawnedHc | undefined;
  try {
    hc = await spawnHc(['--envoy-admin', proxy.adminUrl, '--sequence', sequence, '--state-file', tempStateFile(), ...FAST, ...extra]);
    await waitFor('OPEN', 5000, async () => (await hc!.get('/health_check.html')).status === 200);
    await body(proxy, hc);
    assert.equal(proxy.alive(), true, 'the proxy process is still running: the sidecar, not a drain call, decides when it exits');
  } finally {
    await hc?.stop();
    await proxy.stop();
  }
}

async function answers(hc: SpawnedHc) {
  const [lb, ready, live] = await Promise.all([hc.get('/health_check.html'), hc.get('/health'), hc.get('/live')]);
  return { lb: `${lb.status} ${lb.body}`, ready: `${ready.status} ${ready.body}`, live: `${live.status} ${live.body}` };
}

/** The drain calls the proxy logged (Envoy flushes its admin log once a second). */
async function drainCalls(t: ProxyTarget): Promise<string[]> {
  const calls = () => t.adminCalls().filter((c) => c.startsWith('POST /drain_listeners'));
  await waitFor('the drain calls in the proxy log', 3000, () => calls().length >= 2);
  return calls();
}

/** A keep-alive client with one finished request: an LB's idle pooled connection. */
async function idlePooledConnection(t: ProxyTarget): Promise<{ agent: http.Agent; closed: () => boolean }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  await request(`${t.trafficUrl}/`, { agent });
  const socket = await waitFor('an idle pooled socket', 5_000, () => Object.values(agent.freeSockets).flat()[0]);
  let closed = false;
  socket!.once('close', () => (closed = true));
  return { agent, closed: () => closed };
}

/** A TCP relay to the Envoy admin that can hold what callers send, on new and pooled connections alike: an admin that stops answering. */
async function holdingRelay(adminUrl: string): Promise<{ url: string; hold(): void; held(): net.Socket[]; release(): void; close(): Promise<void> }> {
  const target = new URL(adminUrl);
  const open = new Set<net.Socket>();
  let holding = false;
  const pending: Array<{ client: net.Socket; upstream: net.Socket; chunk: Buffer }> = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('error', end).on('close', end);
    }
    client.on('data', (chunk: Buffer) => (holding ? pending.push({ client, upstream, chunk }) : upstream.write(chunk)));
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    hold: () => {
      holding = true;
    },
    held: () => [...new Set(pending.map((p) => p.client))],
    release: () => {
      holding = false;
      for (const { upstream, chunk } of pending.splice(0)) if (!upstream.destroyed) upstream.write(chunk);
    },
    close: () => {
      for (const s of open) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function assertProfile(state: Record<string, unknown>, t: ProxyTarget): void {
  const proxy = (state['envoy'] as { proxy: Record<string, unknown> }).proxy;
  assert.equal(proxy['version'], t.version, '/state names the Envoy version');
  assert.deepEqual(proxy['drainCalls'], ['/drain_listeners', '/drain_listeners?graceful']);
  assert.equal(proxy['drainCallsBasis'], 'measured');
  assert.deepEqual(proxy['counting'], { basis: 'requests', hcms: { 'outbound_0.0.0.0_8080': 'requests' } });
}

describe('sequences', { concurrency: 3 }, () => {
  for (const target of sidecarTargets()) {
    describe(target.label, { concurrency: 1 }, () => {
      test('drain-first: stops new connects at once, keeps 200 until in-flight is 0 (idle pooled connections do not hold it), then 503, readiness one buffer later', async () => {
        await withRig(target, 'drain-first', ['--lb-buffer', '1'], async (t, hc) => {
          // Margins of a second or more: this runs beside the e2e tests on a busy machine.
          const pooled = await idlePooledConnection(t);
          const busyAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
          const inflight = request(`${t.trafficUrl}/slow?ms=1500`, { agent: busyAgent });
          await waitFor('the slow request in flight', 5_000, () => t.requestsInFlight() === 1);
          const drain = await hc.post('/drain?witness=none');
          assert.equal(drain.status, 202);
          assert.equal(JSON.parse(drain.body).draining, true);

          assert.deepEqual(await answers(hc), { lb: '200 DRAINING', ready: '200 DRAINING', live: '200 DRAINING' });
          assert.equal(await takesNewConnections(t.trafficPort), false, 'new connections are refused: the LB re-sends them');
          assert.equal((await hc.get('/health_check.html')).status, 200, 'still 200 while the request is in flight');

          const done = await inflight;
          assert.equal(done.status, 200, 'the in-flight request completes');
          assert.equal(done.headers.connection, 'close', 'and its keep-alive connection is told to close');
          await waitFor('LB 503', 3000, async () => (await hc.get('/health_check.html')).body === 'CLOSING', 10);
          const closing = await answers(hc);
          assert.equal(closing.lb, '503 CLOSING');
          assert.match(closing.ready, /^(200 CLOSING|503 CLOSED)$/, 'readiness fails with CLOSED, never before');
          await waitFor('CLOSED', 3000, async () => (await hc.get('/health')).status === 503);
          assert.deepEqual(await answers(hc), { lb: '503 CLOSED', ready: '503 CLOSED', live: '200 CLOSED' });

          const state = await hc.state();
          const e = eventTimes(state);
          assert.equal(state['state'], 'CLOSED');
          assert.equal(state['drainTimedOut'], false, 'in-flight reached 0 with an idle pooled connection still open');
          assert.equal(pooled.closed(), false, 'the proxy never closed the idle pooled connection');
          assert.ok(e[3]!.at! <= e[4]!.at! && e[4]!.at! <= e[1]!.at! && e[1]!.at! < e[2]!.at!, `[3] <= [4] <= [1] < [2]: ${JSON.stringify(e)}`);
          assert.ok(e[4]!.at! >= t.zeroSince()!, '[4] is not before the last request really finished');
          assert.ok(e[4]!.at! - e[3]!.at! < 3000, `[4] came with the request, not with a timeout (${e[4]!.at! - e[3]!.at!} ms)`);
          assert.ok(e[2]!.at! - e[1]!.at! >= 1000, 'readiness fails one LB buffer after the LB endpoint');
          assert.equal(e[5]!.estimated, true);
          assert.equal(e[6]!.estimated, true);
          assert.equal(e[5]!.at, e[1]!.at! + 1000);
          assertProfile(state, t);
          assert.deepEqual(await drainCalls(t), DRAIN_CALLS);
          if (t.kind === 'envoy') {
            const xds = await t.stats('^cluster\\.xds-grpc\\.upstream_rq_active$');
            assert.equal(xds.get('cluster.xds-grpc.upstream_rq_active'), 1, 'the xds-grpc trap was there all along, and not counted');
          }
          pooled.agent.destroy();
          busyAgent.destroy();
        });
      });

      test('health-first: 503 at once while the proxy still accepts, the drain after the buffer, readiness at 0', async () => {
        await withRig(target, 'health-first', ['--lb-buffer', '1'], async (t, hc) => {
          assert.equal((await hc.post('/drain?witness=none')).status, 202);
          assert.deepEqual(await answers(hc), { lb: '503 CLOSING', ready: '200 CLOSING', live: '200 CLOSING' });
          assert.equal((await request(`${t.trafficUrl}/`)).status, 200, 'the proxy keeps accepting while the LB notices');
          assert.deepEqual(
            t.adminCalls().filter((c) => c.startsWith('POST /drain')),
            [],
          );
          const inflight = request(`${t.trafficUrl}/slow?ms=1800`);
          await waitFor('DRAINING', 3000, async () => (await hc.get('/health_check.html')).body === 'DRAINING', 10);
          assert.deepEqual(await answers(hc), { lb: '503 DRAINING', ready: '200 DRAINING', live: '200 DRAINING' });
          await waitFor('listeners stopped', 3000, async () => !(await takesNewConnections(t.trafficPort)));
          assert.equal((await inflight).status, 200);
          await waitFor('CLOSED', 3000, async () => (await hc.get('/health')).status === 503);
          assert.deepEqual(await answers(hc), { lb: '503 CLOSED', ready: '503 CLOSED', live: '200 CLOSED' });
          const e = eventTimes(await hc.state());
          assert.ok(e[1]!.at! < e[3]!.at! && e[3]!.at! < e[4]!.at! && e[4]!.at! <= e[2]!.at!, `[1] < [3] < [4] <= [2]: ${JSON.stringify(e)}`);
          assert.ok(e[3]!.at! - e[1]!.at! >= 1000);
          assert.deepEqual(await drainCalls(t), DRAIN_CALLS);
        });
      });

      test('soft-drain: the soft status and body first, then the drain, then 503 at 0', async () => {
        const config = path.join(path.dirname(tempStateFile()), 'hc.json');
        fs.writeFileSync(config, JSON.stringify({ softSignal: { status: 404, body: 'TROFS' }, terminationWitness: { required: false } }));
        await withRig(target, 'soft-drain', ['--config', config, '--lb-buffer', '1'], async (t, hc) => {
          const inflight = request(`${t.trafficUrl}/slow?ms=2500`);
          await waitFor('in flight', 5_000, () => t.requestsInFlight() === 1);
          assert.equal((await hc.post('/drain')).status, 202, 'witness not required by this config');
          assert.deepEqual(await answers(hc), { lb: '404 TROFS', ready: '200 CLOSING', live: '200 CLOSING' });
          await waitFor('DRAINING', 3000, async () => (await hc.state())['state'] === 'DRAINING', 10);
          assert.equal((await hc.get('/health_check.html')).status, 404, 'still the soft status while draining');
          assert.equal((await inflight).status, 200);
          await waitFor('CLOSED', 3000, async () => (await hc.get('/health_check.html')).status === 503);
          assert.deepEqual(await answers(hc), { lb: '503 CLOSED', ready: '503 CLOSED', live: '200 CLOSED' });
          const e = eventTimes(await hc.state());
          assert.equal(e[1]!.note, 'soft signal 404');
          assert.ok(e[1]!.at! < e[3]!.at! && e[3]!.at! < e[4]!.at! && e[4]!.at! <= e[2]!.at!);
        });
      });

      test('probes are answered from the state while an admin poll hangs unanswered through a drain', async () => {
        // An admin that stops answering mid-drain: what reaches it is held, on any connection. Probes
        // answered while one held poll stays open were answered without it; a probe that waited
        // for the admin would come back only once that poll ended (the hc's admin timeout, here
        // 15 s, would close it). Events, not latencies: nothing here depends on the machine's pace.
        const config = path.join(path.dirname(tempStateFile()), 'hc.json');
        fs.writeFileSync(config, JSON.stringify({ envoyAdminTimeoutSeconds: 15, terminationWitness: { required: false } }));
        const proxy = await target.start({ hcmDrainTimeoutMs: 300 });
        const admin = await holdingRelay(proxy.adminUrl);
        let hc: SpawnedHc | undefined;
        try {
          hc = await spawnHc([
            '--envoy-admin',
            admin.url,
            '--config',
            config,
            '--sequence',
            'drain-first',
            '--state-file',
            tempStateFile(),
            ...FAST,
            '--lb-buffer',
            '0.2',
          ]);
          await waitFor('OPEN', 5000, async () => (await hc!.get('/health_check.html')).status === 200);
          const inflight = request(`${proxy.trafficUrl}/slow?ms=4000`, { timeoutMs: 30_000 });
          await waitFor('in flight', 5_000, () => proxy.requestsInFlight() === 1);
          assert.equal((await hc.post('/drain')).status, 202);
          await waitFor('DRAINING', 3000, async () => (await hc!.state())['state'] === 'DRAINING', 10);
          admin.hold();
          const poll = await waitFor('an admin poll held unanswered', 5000, () => admin.held()[0], 10);
          for (let i = 0; i < 5; i++) {
            const probe: Reply = await hc
              .get('/health_check.html')
              .catch((err: Error) => assert.fail(`probe ${i + 1} got no answer while the admin poll hung (${err.message})`));
            assert.deepEqual([probe.status, probe.body], [200, 'DRAINING'], `probe ${i + 1} while the admin poll hangs`);
          }
          assert.equal(poll.destroyed, false, 'the held admin poll was still open when the fifth probe was answered');
          admin.release();
          assert.equal((await inflight).status, 200);
          await waitFor('CLOSED', 5000, async () => (await hc!.get('/health_check.html')).status === 503);
        } finally {
          admin.release();
          await hc?.stop();
          await admin.close();
          await proxy.stop();
        }
      });
    });
  }

  for (const target of sidecarTargets().filter((t) => t.kind === 'envoy')) {
    test(`${target.label} with Istio's default stats matcher: counted by connections, an idle pooled connection holds the drain until its timeout`, async () => {
      await withRig(
        target,
        'drain-first',
        ['--lb-buffer', '0.2', '--drain-timeout', '2'],
        async (t, hc) => {
          const pooled = await idlePooledConnection(t);
          assert.equal((await hc.post('/drain?witness=none')).status, 202);
          await waitFor('CLOSED', 6000, async () => (await hc.state())['state'] === 'CLOSED');
          const state = await hc.state();
          assert.equal(state['drainTimedOut'], true, 'nothing was in flight, yet the count never reached 0');
          assert.equal((state['envoy'] as { proxy: { counting: { basis: string } } }).proxy.counting.basis, 'connections');
          assert.ok(hc.logs.some((l) => l['level'] === 'warn' && /exposes no downstream_rq_active/.test(String(l['msg']))));
          assert.equal(pooled.closed(), false);
          pooled.agent.destroy();
        },
        { requestStats: false },
      );
    });
  }
});

/** Stats parsing and the counting rules, against the stand-in's real /stats (the summing pitfalls). */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import { after, before, test } from 'node:test';
import { DEFAULT_COUNTING_EXCLUDE, DEFAULT_COUNTING_INCLUDE } from '../../src/hc/config';
import { createEnvoyAdmin, EnvoyAdminError } from '../../src/hc/envoy-admin';
import { StatsFormatError, compileCounting, parseStatsText } from '../../src/hc/envoy-stats';
import { startEnvoyStandin, type EnvoyStandin } from '../support/envoy-standin';
import { request, spawnHc, tempStateFile, waitFor } from './helpers';

const rules = { include: DEFAULT_COUNTING_INCLUDE, exclude: DEFAULT_COUNTING_EXCLUDE };
let standin: EnvoyStandin;

before(async () => {
  standin = await startEnvoyStandin({ tcpPort: 0 });
});
after(async () => {
  await standin.stop();
});

test('parses name: value lines, skips histograms, rejects garbage', () => {
  const stats = parseStatsText('a.b: 1\ncluster.outbound|8080||x.svc.upstream_rq_active: 2\nlistener.0.0.0.0_8080.downstream_cx_length_ms: No recorded values\nh: P0(nan,1) P25(nan,2)\n\n');
  assert.deepEqual(stats, [
    { name: 'a.b', value: 1 },
    { name: 'cluster.outbound|8080||x.svc.upstream_rq_active', value: 2 },
  ]);
  assert.throws(() => parseStatsText('<html><body>502 Bad Gateway</body></html>'), StatsFormatError);
  assert.throws(() => parseStatsText('listener.x.downstream_cx_active: many'), StatsFormatError);
});

test('the default rules count listener connections only, once, HTTP and TCP alike', () => {
  const counter = compileCounting(rules);
  assert.equal(counter.counts('listener.0.0.0.0_8080.downstream_cx_active'), true);
  assert.equal(counter.counts('listener.[__]_8443.downstream_cx_active'), true);
  for (const name of [
    'listener.0.0.0.0_8080.worker_0.downstream_cx_active',
    'listener.0.0.0.0_15021.downstream_cx_active',
    'listener.[__]_15090.downstream_cx_active',
    'listener.admin.downstream_cx_active',
    'listener.admin.main_thread.downstream_cx_active',
    'http.admin.downstream_rq_active',
    'cluster.xds-grpc.upstream_rq_active',
    'http.outbound_0.0.0.0_8080.downstream_cx_active',
  ]) {
    assert.equal(counter.counts(name), false, name);
  }
  const broad = compileCounting({ include: ['rq_active$', 'cx_active$'], exclude: [] });
  assert.equal(broad.counts('cluster.xds-grpc.upstream_rq_active'), false, 'the always-excluded list holds whatever the include says');
  assert.equal(broad.counts('http.admin.downstream_rq_active'), false);
  assert.equal(broad.filter, '(?:rq_active$)|(?:cx_active$)');
});

test('counts the stand-in\'s real connections, TCP passthrough included', async () => {
  const envoy = createEnvoyAdmin({ baseUrl: standin.adminUrl, timeoutMs: 1000, counting: rules });
  assert.equal(await envoy.inFlight(), 0);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  const tcp = net.connect(standin.tcpPort!, standin.host);
  try {
    await new Promise((r) => tcp.once('connect', r));
    const slow = Promise.all([request(`${standin.trafficUrl}/slow?ms=300`, { agent }), request(`${standin.trafficUrl}/slow?ms=300`, { agent })]);
    await waitFor('two HTTP connections', () => standin.counts().connections === 2);
    assert.equal(await envoy.inFlight(), 3, '2 HTTP + 1 TCP, each once (no worker lines)');
    await slow;
    assert.equal(await envoy.inFlight(), 3, 'idle keep-alive connections still count: they hold the proxy');
  } finally {
    agent.destroy();
    tcp.destroy();
  }
  await waitFor('all connections closed', async () => (await envoy.inFlight()) === 0);
});

test('the xds-grpc trap: a naive rq_active sum never reaches 0 while the listener count does', async () => {
  const envoy = createEnvoyAdmin({ baseUrl: standin.adminUrl, timeoutMs: 1000, counting: rules });
  const naiveSum = async () => {
    const res = await request(`${standin.adminUrl}/stats?filter=${encodeURIComponent('rq_active$')}`);
    return parseStatsText(res.body).reduce((sum, s) => sum + s.value, 0);
  };
  const inflight = request(`${standin.trafficUrl}/slow?ms=400`);
  await waitFor('the slow request in flight', () => standin.counts().requests === 1);
  const naive: number[] = [];
  const ours: number[] = [];
  for (;;) {
    naive.push(await naiveSum());
    ours.push(await envoy.inFlight());
    if (ours[ours.length - 1] === 0) break;
    assert.ok(ours.length < 500, 'our count reaches 0 once the request is done');
    await new Promise((r) => setTimeout(r, 20));
  }
  await inflight;
  assert.ok(ours.length > 2, 'sampled while the request was in flight');
  assert.ok(Math.min(...naive) >= 3, `the naive sum holds xds-grpc + sds-grpc + the admin request itself: ${Math.min(...naive)}`);
  const text = standin.statsText({ filter: 'rq_active$' });
  assert.match(text, /^cluster\.xds-grpc\.upstream_rq_active: 1$/m);
});

test('admin errors: HTTP status, garbage and timeouts reject with the call named', async () => {
  const envoy = createEnvoyAdmin({ baseUrl: standin.adminUrl, timeoutMs: 200, counting: rules });
  await standin.setFault('garbage');
  await assert.rejects(envoy.inFlight(), (e: unknown) => e instanceof EnvoyAdminError && /GET \/stats: not an Envoy stats line/.test((e as Error).message));
  await assert.rejects(envoy.serverState(), /GET \/ready: unexpected answer/);
  await standin.setFault('slow', { delayMs: 1000 });
  await assert.rejects(envoy.inFlight(), /no answer within 200ms/);
  await standin.setFault('down');
  await assert.rejects(envoy.serverState(), /ECONNREFUSED/);
  await standin.setFault('none');
  assert.equal(await envoy.serverState(), 'LIVE');
});

test('a negative or wrapped value is garbage, never a credit against what is in flight (attack 5)', () => {
  assert.throws(() => parseStatsText('listener.0.0.0.0_8080.downstream_cx_active: 3\nlistener.0.0.0.0_8443.downstream_cx_active: -3\n'), /negative\): "listener\.0\.0\.0\.0_8443\.downstream_cx_active: -3"/);
  const counter = compileCounting(rules);
  assert.throws(() => counter.count(parseStatsText('listener.0.0.0.0_8080.downstream_cx_active: 18446744073709551615\n')), /listener\.0\.0\.0\.0_8080\.downstream_cx_active is 18446744073709552000: a gauge wrapped below 0/);
  assert.equal(counter.count(parseStatsText(`listener.x.downstream_cx_active: ${Number.MAX_SAFE_INTEGER}`)).total, Number.MAX_SAFE_INTEGER);
  // Not counted, a huge value is fine (Envoy keeps a hash in this gauge), and text readouts are skipped.
  assert.equal(parseStatsText('cluster_manager.cds.version: 13237225503670494420\ncluster_manager.cds.version_text: "1"\n').length, 1);
});

test('an empty answer, or one without a counted line, cannot be counted: never 0 in flight (attack 6)', () => {
  const counter = compileCounting(rules);
  assert.throws(() => counter.count(parseStatsText('')), /no statistic matches the counting rules .*: cannot count/);
  assert.throws(() => counter.count(parseStatsText('cluster.xds-grpc.upstream_rq_active: 1\nlistener.0.0.0.0_15021.downstream_cx_active: 1\n')), /cannot count/);
  assert.deepEqual(counter.count(parseStatsText('listener.0.0.0.0_8080.downstream_cx_active: 0\n')).total, 0, 'a counted line at 0 is 0');
});

test('the real sidecar behind an admin answering those bodies: FAULT, never CLOSED with requests in flight', async () => {
  for (const body of ['listener.0.0.0.0_8080.downstream_cx_active: 3\nlistener.0.0.0.0_8443.downstream_cx_active: -3\n', '', 'server.live: 1\n']) {
    let stats = 'listener.0.0.0.0_8080.downstream_cx_active: 3\n';
    const admin = http.createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/ready') res.end('LIVE\n');
      else if (path === '/stats') res.end(stats);
      else if (path.startsWith('/drain_listeners')) res.end('OK\n');
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => admin.listen(0, '127.0.0.1', r));
    const hc = await spawnHc(['--envoy-admin', `http://127.0.0.1:${(admin.address() as net.AddressInfo).port}`, '--sequence', 'drain-first', '--state-file', tempStateFile(), '--poll-interval', '0.05', '--lb-buffer', '0.1', '--drain-timeout', '30']);
    try {
      await waitFor('OPEN', async () => (await hc.get('/health_check.html')).status === 200);
      assert.equal((await hc.post('/drain?witness=none')).status, 202);
      await waitFor('counting 3 in flight', async () => (await hc.state())['inFlight'] === 3);
      stats = body;
      const state = await waitFor('FAULT', async () => {
        const s = await hc.state();
        return s['state'] === 'FAULT' ? s : undefined;
      });
      assert.match(String(state['reason']), /negative|cannot count/, JSON.stringify(body));
      assert.equal(state['inFlight'], 3, 'the last good count stands');
      assert.equal(((state['events'] as { id: number; at: string | null }[]).find((e) => e.id === 4)!).at, null, 'in-flight 0 [4] never recorded');
    } finally {
      await hc.stop();
      await new Promise((r) => admin.close(r));
    }
  }
});

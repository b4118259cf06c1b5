/** Stats parsing and the counting rules, against the stand-in's real /stats (the summing pitfalls). */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import { after, before, test } from 'node:test';
import { DEFAULT_COUNTING_EXCLUDE, DEFAULT_COUNTING_INCLUDE } from '../../src/contract/hc-config';
import { createEnvoyAdmin, EnvoyAdminError } from '../../src/hc/envoy-admin';
import { CountingRulesError, StatsFormatError, compileCounting, countingBasis, parseStatsText, type Stat } from '../../src/hc/envoy-stats';
import { startEnvoyStandin, type EnvoyStandin } from '../support/envoy-standin';
import { collectingLogger } from './fakes';
import { request } from '../support/http';
import { fastDrainFirst, spawnHc, tempStateFile } from '../support/hc';
import { waitFor } from '../support/wait';

const rules = { include: DEFAULT_COUNTING_INCLUDE, exclude: DEFAULT_COUNTING_EXCLUDE };
let standin: EnvoyStandin;

before(async () => {
  standin = await startEnvoyStandin({ tcpPort: 0 });
});
after(async () => {
  await standin.stop();
});

test('parses name: value lines, skips histograms, rejects garbage', () => {
  const stats = parseStatsText(
    'a.b: 1\ncluster.outbound|8080||x.svc.upstream_rq_active: 2\nlistener.0.0.0.0_8080.downstream_cx_length_ms: No recorded values\nh: P0(nan,1) P25(nan,2)\n\n',
  );
  assert.deepEqual(stats, [
    { name: 'a.b', value: 1 },
    { name: 'cluster.outbound|8080||x.svc.upstream_rq_active', value: 2 },
  ]);
  assert.throws(() => parseStatsText('<html><body>502 Bad Gateway</body></html>'), StatsFormatError);
  assert.throws(() => parseStatsText('listener.x.downstream_cx_active: many'), StatsFormatError);
});

test('the default rules sum listener connections only, once, HTTP and TCP alike', () => {
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
  assert.equal(
    broad.filter,
    '(?:rq_active$)|(?:cx_active$)|(?:^http\\..+\\.downstream_(cx|rq|cx_upgrades)_active$)',
    "Envoy also sends the HTTP connection managers' gauges",
  );
});

const stats = (lines: Record<string, number>): Stat[] => Object.entries(lines).map(([name, value]) => ({ name, value }));

test("requests of each HTTP connection manager replace its connections; other listeners' connections stay", () => {
  const counter = compileCounting(rules);
  const count = counter.count(
    stats({
      'listener.0.0.0.0_8080.downstream_cx_active': 5, // 5 HTTP connections, 2 of them busy
      'listener.0.0.0.0_8080.worker_0.downstream_cx_active': 5,
      'listener.0.0.0.0_8443.downstream_cx_active': 4, // 3 HTTPS + 1 TLS passthrough (tcp_proxy) on one listener
      'listener.0.0.0.0_15021.downstream_cx_active': 1,
      'listener.0.0.0.0_15090.downstream_cx_active': 1,
      'listener.admin.downstream_cx_active': 1,
      'http.outbound_0.0.0.0_8080.downstream_cx_active': 5,
      'http.outbound_0.0.0.0_8080.downstream_rq_active': 2,
      'http.outbound_0.0.0.0_8443.downstream_cx_active': 3,
      'http.outbound_0.0.0.0_8443.downstream_rq_active': 0,
      'http.admin.downstream_cx_active': 1,
      'http.admin.downstream_rq_active': 1,
      'http.agent.downstream_cx_active': 1,
      'http.agent.downstream_rq_active': 0,
      'http.stats.downstream_cx_active': 1,
      'http.stats.downstream_rq_active': 0,
    }),
  );
  assert.deepEqual(
    [count.total, count.requests, count.otherConnections],
    [3, 2, 1],
    '2 requests + the passthrough connection; the 6 idle connections are not in flight',
  );
  assert.deepEqual(
    count.hcms,
    { 'outbound_0.0.0.0_8080': 'requests', 'outbound_0.0.0.0_8443': 'requests' },
    'admin, agent (15021) and stats (15090) are never counted',
  );
  assert.equal(countingBasis(count), 'requests');
});

test('WebSockets are reported apart from the requests they are among, never counted twice, and unknown without the gauge', () => {
  const counter = compileCounting(rules);
  const withGauge = counter.count(
    stats({
      'listener.0.0.0.0_8080.downstream_cx_active': 3,
      'http.outbound_0.0.0.0_8080.downstream_cx_active': 3,
      'http.outbound_0.0.0.0_8080.downstream_rq_active': 2,
      'http.outbound_0.0.0.0_8080.downstream_cx_upgrades_active': 1,
      'http.admin.downstream_cx_upgrades_active': 5,
    }),
  );
  assert.deepEqual(
    [withGauge.total, withGauge.requests, withGauge.upgrades],
    [2, 2, 1],
    'the WebSocket is one of the 2 requests; the admin HCM is never counted',
  );
  const without = counter.count(
    stats({
      'listener.0.0.0.0_8080.downstream_cx_active': 1,
      'http.outbound_0.0.0.0_8080.downstream_cx_active': 1,
      'http.outbound_0.0.0.0_8080.downstream_rq_active': 1,
    }),
  );
  assert.equal(without.upgrades, null, 'no gauge: unknown, not 0');
});

test("an HTTP connection manager without downstream_rq_active (Istio's default stats matcher) is counted by its connections, and says so", () => {
  const counter = compileCounting(rules);
  const noRq = counter.count(stats({ 'listener.0.0.0.0_8080.downstream_cx_active': 4, 'http.outbound_0.0.0.0_8080.downstream_cx_active': 4 }));
  assert.deepEqual([noRq.total, countingBasis(noRq)], [4, 'connections']);
  const mixed = counter.count(
    stats({
      'listener.0.0.0.0_8080.downstream_cx_active': 4,
      'listener.0.0.0.0_9090.downstream_cx_active': 2,
      'http.outbound_0.0.0.0_8080.downstream_cx_active': 4,
      'http.outbound_0.0.0.0_8080.downstream_rq_active': 1,
      'http.outbound_0.0.0.0_9090.downstream_cx_active': 2,
    }),
  );
  assert.deepEqual([mixed.total, countingBasis(mixed)], [3, 'mixed']);
  assert.equal(countingBasis(counter.count(stats({ 'listener.0.0.0.0_8443.downstream_cx_active': 2 }))), 'connections', 'no HTTP connection manager at all');
});

test('rules that drop a listener but count its HTTP connection manager are an error, never a low count', () => {
  const counter = compileCounting({ include: DEFAULT_COUNTING_INCLUDE, exclude: [...DEFAULT_COUNTING_EXCLUDE, '^listener\\.0\\.0\\.0\\.0_8080\\.'] });
  assert.throws(
    () =>
      counter.count(
        stats({
          'listener.0.0.0.0_8443.downstream_cx_active': 1,
          'listener.0.0.0.0_8080.downstream_cx_active': 3,
          'http.outbound_0.0.0.0_8080.downstream_cx_active': 3,
          'http.outbound_0.0.0.0_8080.downstream_rq_active': 0,
        }),
      ),
    (e: unknown) => e instanceof CountingRulesError && /exclude its http\.<prefix>\. too/.test((e as Error).message),
  );
});

test("the stand-in's real stats: requests and the TCP passthrough connection count, idle keep-alive connections do not", async () => {
  const { log, lines } = collectingLogger();
  const envoy = createEnvoyAdmin({ baseUrl: standin.adminUrl, timeoutMs: 1000, counting: rules, log });
  assert.equal(await envoy.inFlight(), 0);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  const tcp = net.connect(standin.tcpPort!, standin.host);
  try {
    await new Promise((r) => tcp.once('connect', r));
    const slow = Promise.all([request(`${standin.trafficUrl}/slow?ms=300`, { agent }), request(`${standin.trafficUrl}/slow?ms=300`, { agent })]);
    await waitFor('two HTTP requests', 5_000, () => standin.counts().requests === 2);
    assert.equal(await envoy.inFlight(), 3, '2 HTTP requests + 1 TCP connection, each once');
    await slow;
    assert.equal(standin.counts().connections, 2, 'two idle keep-alive connections stay open');
    assert.equal(await envoy.inFlight(), 1, 'only the TCP connection is in flight');
  } finally {
    agent.destroy();
    tcp.destroy();
  }
  await waitFor('all closed', 5_000, async () => (await envoy.inFlight()) === 0);
  assert.deepEqual(envoy.profile().counting, { basis: 'requests', hcms: { 'outbound_0.0.0.0_8080': 'requests' } });
  assert.match(lines.find((l) => l.msg.startsWith('counting'))!.msg, /requests of the HTTP connection managers/);
});

test('the adapter reads /server_info once LIVE: version, drain calls of that version, counting basis', async () => {
  const { log, lines } = collectingLogger();
  const envoy = createEnvoyAdmin({ baseUrl: standin.adminUrl, timeoutMs: 1000, counting: rules, log });
  const before = envoy.profile();
  assert.deepEqual([before.versionString, before.version, before.drainCallsBasis, before.counting], [null, null, 'fallback', null]);
  assert.equal(await envoy.serverState(), 'LIVE');
  const p = envoy.profile();
  assert.deepEqual(
    [p.versionString, p.version, p.drainCallsBasis, p.drainStrategy],
    ['standin/1.36.4/Clean/RELEASE/BoringSSL', '1.36.4', 'measured', 'Immediate'],
  );
  assert.deepEqual(p.drainCalls, ['/drain_listeners', '/drain_listeners?graceful']);
  assert.match(p.statsPath, /^\/stats\?filter=.*&type=Gauges$/);
  assert.equal(before.statsPath.includes('type='), false, 'before the version is known: the plain query');
  assert.equal(p.counting?.basis, 'requests', 'counted once while serving, before any drain');
  assert.ok(lines.some((l) => l.level === 'info' && l.msg === 'Envoy 1.36.4: drain calls /drain_listeners, /drain_listeners?graceful'));
});

test("Istio's default stats matcher: the adapter warns that it counts connections", async () => {
  const plain = await startEnvoyStandin({ requestStats: false });
  try {
    const { log, lines } = collectingLogger();
    const envoy = createEnvoyAdmin({ baseUrl: plain.adminUrl, timeoutMs: 1000, counting: rules, log });
    await envoy.serverState();
    assert.equal(envoy.profile().counting?.basis, 'connections');
    const warning = lines.find((l) => l.level === 'warn' && /downstream_rq_active/.test(l.msg));
    assert.match(warning!.msg, /http\.outbound_0\.0\.0\.0_8080: counted by connections.*proxyStatsMatcher\.inclusionSuffixes/);
  } finally {
    await plain.stop();
  }
});

test('the xds-grpc trap: a naive rq_active sum never reaches 0 while the listener count does', async () => {
  const envoy = createEnvoyAdmin({ baseUrl: standin.adminUrl, timeoutMs: 1000, counting: rules });
  const naiveSum = async () => {
    const res = await request(`${standin.adminUrl}/stats?filter=${encodeURIComponent('rq_active$')}`);
    return parseStatsText(res.body).reduce((sum, s) => sum + s.value, 0);
  };
  const inflight = request(`${standin.trafficUrl}/slow?ms=400`);
  await waitFor('the slow request in flight', 5_000, () => standin.counts().requests === 1);
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

test('an unparseable /server_info version gets the fallback calls, logged as a warning, and the drain still works', async () => {
  const calls: string[] = [];
  const server = http.createServer((req, res) => {
    calls.push(`${req.method} ${req.url}`);
    if (req.url === '/ready') return void res.end('LIVE\n');
    if (req.url === '/server_info') return void res.end(JSON.stringify({ version: 'custom-build', command_line_options: { drain_strategy: 'Gradual' } }));
    if (req.url?.startsWith('/drain_listeners')) return void res.end('OK\n');
    if (req.url?.startsWith('/stats')) return void res.end('listener.0.0.0.0_8080.downstream_cx_active: 0\n');
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    const { log, lines } = collectingLogger();
    const envoy = createEnvoyAdmin({ baseUrl: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, timeoutMs: 1000, counting: rules, log });
    assert.equal(await envoy.serverState(), 'LIVE');
    const p = envoy.profile();
    assert.deepEqual([p.versionString, p.version, p.drainCallsBasis, p.drainStrategy], ['custom-build', null, 'fallback', 'Gradual']);
    assert.equal(p.statsPath.includes('type='), false, 'no type=Gauges for a version it cannot place');
    assert.ok(lines.some((l) => l.level === 'warn' && /unknown version/.test(l.msg)));
    assert.ok(lines.some((l) => l.level === 'warn' && /--drain-strategy Gradual/.test(l.msg)));
    await envoy.drainListeners();
    assert.deepEqual(
      calls.filter((c) => c.startsWith('POST')),
      ['POST /drain_listeners', 'POST /drain_listeners?graceful'],
    );
  } finally {
    server.close();
  }
});

test('a negative or wrapped value is garbage, never a credit against what is in flight (attack 5)', () => {
  assert.throws(
    () => parseStatsText('listener.0.0.0.0_8080.downstream_cx_active: 3\nlistener.0.0.0.0_8443.downstream_cx_active: -3\n'),
    /negative\): "listener\.0\.0\.0\.0_8443\.downstream_cx_active: -3"/,
  );
  const counter = compileCounting(rules);
  assert.throws(
    () => counter.count(parseStatsText('listener.0.0.0.0_8080.downstream_cx_active: 18446744073709551615\n')),
    /listener\.0\.0\.0\.0_8080\.downstream_cx_active is 18446744073709552000: a gauge wrapped below 0/,
  );
  assert.equal(counter.count(parseStatsText(`listener.x.downstream_cx_active: ${Number.MAX_SAFE_INTEGER}`)).total, Number.MAX_SAFE_INTEGER);
  // Not counted, a huge value is fine (Envoy keeps a hash in this gauge), and text readouts are skipped.
  assert.equal(parseStatsText('cluster_manager.cds.version: 13237225503670494420\ncluster_manager.cds.version_text: "1"\n').length, 1);
});

test('an empty answer, or one without a counted line, cannot be counted: never 0 in flight (attack 6)', () => {
  const counter = compileCounting(rules);
  assert.throws(() => counter.count(parseStatsText('')), /no statistic matches the counting rules .*: cannot count/);
  assert.throws(
    () => counter.count(parseStatsText('cluster.xds-grpc.upstream_rq_active: 1\nlistener.0.0.0.0_15021.downstream_cx_active: 1\n')),
    /cannot count/,
  );
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
    const hc = await spawnHc([
      '--envoy-admin',
      `http://127.0.0.1:${(admin.address() as net.AddressInfo).port}`,
      '--sequence',
      'drain-first',
      '--state-file',
      tempStateFile(),
      '--poll-interval',
      '0.05',
      '--lb-buffer',
      '0.1',
      '--drain-timeout',
      '30',
    ]);
    try {
      await waitFor('OPEN', 5_000, async () => (await hc.get('/health_check.html')).status === 200);
      assert.equal((await hc.post('/drain?witness=none')).status, 202);
      await waitFor('counting 3 in flight', 5_000, async () => (await hc.state())['inFlight'] === 3);
      stats = body;
      const state = await waitFor('FAULT', 5_000, async () => {
        const s = await hc.state();
        return s['state'] === 'FAULT' ? s : undefined;
      });
      assert.match(String(state['reason']), /negative|cannot count/, JSON.stringify(body));
      assert.equal(state['inFlight'], 3, 'the last good count stands');
      assert.equal((state['events'] as { id: number; at: string | null }[]).find((e) => e.id === 4)!.at, null, 'in-flight 0 [4] never recorded');
    } finally {
      await hc.stop();
      await new Promise((r) => admin.close(r));
    }
  }
});

/** An admin that is LIVE and counts, but answers /server_info with `serverInfo` (404 until told otherwise). */
async function restrictedAdmin(): Promise<{ url: string; calls: string[]; serverInfo: { status: number }; close(): Promise<void> }> {
  const calls: string[] = [];
  const serverInfo = { status: 404 };
  const server = http.createServer((req, res) => {
    calls.push(`${req.method} ${req.url}`);
    if (req.url === '/ready') return void res.end('LIVE\n');
    if (req.url === '/server_info') {
      res.statusCode = serverInfo.status;
      return void res.end(
        serverInfo.status === 200
          ? JSON.stringify({ version: 'abc/1.36.4/Clean/RELEASE/BoringSSL', command_line_options: { drain_strategy: 'Immediate' } })
          : 'forbidden by the admin filter\n',
      );
    }
    if (req.url?.startsWith('/drain_listeners')) return void res.end('OK\n');
    if (req.url?.startsWith('/stats')) return void res.end('listener.0.0.0.0_8080.downstream_cx_active: 0\n');
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, calls, serverInfo, close: () => new Promise((r) => server.close(() => r())) };
}

test('a failing /server_info is warned about once and tried again with a backoff; the profile says why the version is unknown', async () => {
  const admin = await restrictedAdmin();
  try {
    const { log, lines } = collectingLogger();
    let clock = Date.UTC(2026, 0, 1);
    const envoy = createEnvoyAdmin({ baseUrl: admin.url, timeoutMs: 1000, counting: rules, log, now: () => clock });
    assert.equal(envoy.profile().versionUnknown?.reason, 'not-read-yet');
    // 60 s of polls every 100 ms: 600 polls, as the sidecar's poll loop makes them.
    for (let i = 0; i < 600; i++, clock += 100) assert.equal(await envoy.serverState(), 'LIVE');
    const warnings = lines.filter((l) => l.level === 'warn' && /server_info/.test(l.msg));
    assert.equal(warnings.length, 1, `one warning, not one per poll: ${warnings.length}`);
    assert.match(
      warnings[0]!.msg,
      /^GET \/server_info failed: Envoy version unknown, the drain uses the fallback calls until it answers; tried again after 1 s/,
    );
    assert.equal(warnings[0]!.fields?.['error'], 'HTTP 404');
    // Tries at 0, 1, 3, 7, 15, 31 s (backoff 1, 2, 4, 8, 16, 32 s): 6 in 60 s, not 600.
    assert.equal(admin.calls.filter((c) => c === 'GET /server_info').length, 6);
    const unknown = envoy.profile();
    assert.equal(unknown.version, null);
    assert.equal(unknown.drainCallsBasis, 'fallback');
    assert.deepEqual([unknown.versionUnknown?.reason, unknown.versionUnknown?.failures], ['server-info-failing', 6]);
    assert.match(unknown.versionUnknown!.detail, /^GET \/server_info failed 6 times, last: HTTP 404; next try at 2026-01-01T00:01:03\.000Z$/);
    // The backoff is capped at a minute; the answer, once it comes, is taken.
    admin.serverInfo.status = 200;
    for (let i = 0; i < 20; i++, clock += 100) await envoy.serverState();
    assert.equal(envoy.profile().version, null, 'not before the next try is due (63 s)');
    clock = Date.UTC(2026, 0, 1, 0, 1, 3);
    await envoy.serverState();
    const known = envoy.profile();
    assert.deepEqual([known.version, known.versionUnknown, known.drainCallsBasis], ['1.36.4', null, 'measured']);
    assert.ok(lines.some((l) => l.level === 'info' && l.msg === 'GET /server_info answered after 6 failed tries'));
    assert.equal(lines.filter((l) => l.level === 'warn').length, 1, 'still the one warning');
  } finally {
    await admin.close();
  }
});

test('the sidecar process behind an admin without /server_info: one warning line in its log, /state says the version is unknown', async () => {
  const admin = await restrictedAdmin();
  const hc = await spawnHc([...fastDrainFirst(admin.url)]);
  try {
    await waitFor('OPEN', 5_000, async () => (await hc.get('/health_check.html')).status === 200);
    const polls = () => admin.calls.filter((c) => c === 'GET /ready').length;
    const start = polls();
    await waitFor('40 more polls', 10_000, () => polls() >= start + 40);
    const serverInfoLines = hc.logs.filter((l) => typeof l['msg'] === 'string' && (l['msg'] as string).includes('/server_info'));
    assert.equal(serverInfoLines.length, 1, JSON.stringify(serverInfoLines));
    assert.equal(serverInfoLines[0]!['level'], 'warn');
    const state = await hc.state();
    const proxy = (state['envoy'] as { proxy: { version: string | null; versionUnknown: { reason: string; failures: number } | null } }).proxy;
    assert.equal(proxy.version, null);
    assert.equal(proxy.versionUnknown?.reason, 'server-info-failing');
    assert.ok(admin.calls.filter((c) => c === 'GET /server_info').length <= 3, 'a few tries in the first seconds, not one per poll');
  } finally {
    await hc.stop();
    await admin.close();
  }
});

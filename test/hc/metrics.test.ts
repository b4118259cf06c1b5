/**
 * /metrics: the families an on-call engineer reads after a rollout, their values through a whole
 * sequence on a scripted clock, promtool's lint of the exposition, and the metrics port itself.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as http from 'node:http';
import * as os from 'node:os';
import { describe, test } from 'node:test';
import { HcMachine } from '../../src/hc/machine';
import { createMetricsEndpoint, finalScrapeWait } from '../../src/hc/metrics-server';
import { DRAIN_DURATION_BUCKETS, renderMetrics, type MetricsContext } from '../../src/hc/metrics';
import { memoryStateStore } from '../../src/hc/state-file';
import type { HcConfigInput } from '../../src/contract/hc-config';
import { terminationEvent, type EventId } from '../../src/contract/hc';
import { startEnvoyStandin } from '../support/envoy-standin';
import { FakeClock, FakeEnvoy, testConfig } from './fakes';
import { request } from '../support/http';
import { spawnHc, tempStateFile } from '../support/hc';
import { waitFor } from '../support/wait';

const S = 1000;
const context: MetricsContext = { version: '9.9.9', envoyVersion: () => '1.36.4', terminatingSince: () => null };

/** name{labels} -> value, from an exposition. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    out.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return out;
}

async function machineAt(input: HcConfigInput) {
  const clock = new FakeClock();
  const envoy = new FakeEnvoy();
  const machine = new HcMachine({
    config: testConfig({ lbBufferSeconds: 10, drainTimeoutSeconds: 60, ...input }),
    clock,
    envoy,
    store: memoryStateStore(),
    log: () => {},
  });
  machine.start();
  await clock.advance(0);
  return { clock, envoy, machine, metrics: () => samples(renderMetrics(machine, context)) };
}

describe('metrics through a sequence', () => {
  test('health-first: info, state, in-flight at each event, the drain histogram; no timeout', async () => {
    const { clock, envoy, machine, metrics } = await machineAt({ sequence: 'health-first' });
    let m = metrics();
    assert.equal(m.get('gracegate_hc_info{version="9.9.9",sequence="health-first",envoy_version="1.36.4"}'), 1);
    assert.equal(m.get('gracegate_hc_state{state="OPEN"}'), 1);
    assert.equal(m.get('gracegate_hc_in_sequence'), 0);
    assert.equal(m.get('gracegate_hc_drain_duration_seconds_count'), 0);
    assert.equal(m.get('gracegate_hc_fault_entries_total'), 0, 'the start-up wait for Envoy is not a FAULT entry');

    envoy.count = 7;
    await machine.requestDrain({ witness: false });
    await clock.advance(0);
    m = metrics();
    assert.equal(m.get('gracegate_hc_in_sequence'), 1);
    assert.equal(m.get('gracegate_hc_event_in_flight{event="1",name="lb-health-fails"}'), 7, 'read when the LB answer turned 503');
    assert.equal(m.get('gracegate_hc_event_in_flight{event="5",name="lb-marks-down"}'), undefined, '[5] is read at its expected time, not now');

    envoy.count = 4;
    await clock.advance(10 * S); // the LB buffer: [5] expected now, then the proxy drain [3]
    m = metrics();
    assert.equal(m.get('gracegate_hc_event_in_flight{event="5",name="lb-marks-down"}'), 4);
    assert.equal(m.get('gracegate_hc_event_in_flight{event="3",name="proxy-drain-starts"}'), 4);
    assert.equal(m.get('gracegate_hc_state{state="DRAINING"}'), 1);

    await clock.advance(2.2 * S);
    envoy.count = 0;
    await clock.advance(1 * S);
    m = metrics();
    assert.equal(m.get('gracegate_hc_state{state="CLOSED"}'), 1);
    assert.equal(m.get('gracegate_hc_in_sequence'), 0, 'CLOSED ends the sequence');
    assert.equal(m.get('gracegate_hc_event_in_flight{event="4",name="in-flight-zero"}'), 0);
    const drain = (at(machine, 4)! - at(machine, 3)!) / S;
    assert.ok(drain >= 3 && drain <= 3.5, `drain ${drain} s: zero is seen at the first poll after 3.2 s`);
    assert.equal(m.get('gracegate_hc_drain_duration_seconds_count'), 1);
    assert.equal(m.get('gracegate_hc_drain_duration_seconds_sum'), drain);
    for (const le of DRAIN_DURATION_BUCKETS) assert.equal(m.get(`gracegate_hc_drain_duration_seconds_bucket{le="${le}"}`), drain <= le ? 1 : 0, `le=${le}`);
    assert.equal(m.get('gracegate_hc_drain_duration_seconds_bucket{le="+Inf"}'), 1);
    assert.equal(m.get('gracegate_hc_drain_timeouts_total'), 0);
    assert.equal(m.get('gracegate_hc_event_timestamp_seconds{event="4",name="in-flight-zero",estimated="false"}'), at(machine, 4)! / S);
    machine.stop();
  });

  test('drain-first with a drain timeout: the timeout counts once, [4] holds what was left', async () => {
    const { clock, envoy, machine, metrics } = await machineAt({ sequence: 'drain-first', drainTimeoutSeconds: 5 });
    envoy.count = 2;
    await machine.requestDrain({ witness: false });
    await clock.advance(5 * S);
    const m = metrics();
    assert.equal(m.get('gracegate_hc_drain_timeouts_total'), 1);
    assert.equal(m.get('gracegate_hc_event_in_flight{event="4",name="in-flight-zero"}'), 2);
    assert.equal(m.get('gracegate_hc_drain_duration_seconds_sum'), 5);
    assert.equal(m.get('gracegate_hc_drain_duration_seconds_bucket{le="5"}'), 1);
    assert.equal(m.get('gracegate_hc_drain_duration_seconds_bucket{le="2.5"}'), 0);
    machine.stop();
  });

  test('FAULT entries count each entry after start-up', async () => {
    const { clock, envoy, machine, metrics } = await machineAt({ faultAfterFailures: 1 });
    envoy.ready = new Error('connect ECONNREFUSED');
    await clock.advance(1 * S);
    assert.equal(metrics().get('gracegate_hc_state{state="FAULT"}'), 1);
    envoy.ready = 'LIVE';
    await clock.advance(1 * S);
    envoy.ready = new Error('connect ECONNREFUSED');
    await clock.advance(1 * S);
    assert.equal(metrics().get('gracegate_hc_fault_entries_total'), 2);
    machine.stop();
  });
});

test('promtool check metrics finds nothing to say about the exposition', async () => {
  const { clock, envoy, machine } = await machineAt({ sequence: 'drain-first' });
  envoy.count = 1;
  await machine.requestDrain({ witness: false });
  await clock.advance(1 * S);
  envoy.count = 0;
  await clock.advance(1 * S);
  const text = renderMetrics(machine, context);
  machine.stop();
  // Exit 0 and no output: no naming or format problem (promtool lints names, units, _total, HELP).
  const out = execFileSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.equal(out.trim(), '');
});

test('the final scrape: resolves at the next GET /metrics, or at the bound', async () => {
  const clock = new FakeClock();
  const machine = new HcMachine({ config: testConfig(), clock, envoy: new FakeEnvoy(), store: memoryStateStore(), log: () => {} });
  const endpoint = createMetricsEndpoint(machine, context, clock);
  const bounded = endpoint.nextScrape(30 * S);
  await clock.advance(30 * S);
  assert.equal(await bounded, false);
  endpoint.server.listen(0, '127.0.0.1');
  await new Promise((r) => endpoint.server.once('listening', r));
  try {
    const port = (endpoint.server.address() as { port: number }).port;
    const waiting = endpoint.nextScrape(30 * S);
    assert.equal((await request(`http://127.0.0.1:${port}/metrics`, { method: 'HEAD' })).status, 200);
    await clock.advance(1 * S);
    assert.equal(endpoint.lastScrapeAt(), null, 'HEAD is no scrape');
    await request(`http://127.0.0.1:${port}/metrics`);
    assert.equal(await waiting, true);
    assert.equal((await request(`http://127.0.0.1:${port}/metrics`, { method: 'POST' })).status, 405);
    assert.equal((await request(`http://127.0.0.1:${port}/state`)).status, 404, 'nothing but /metrics');
  } finally {
    endpoint.server.close();
    machine.stop();
  }
});

test('gracegate hc: /metrics on its own port on all interfaces, not on the control port; in a sequence, SIGTERM waits for one more scrape', async () => {
  const standin = await startEnvoyStandin({ hcmDrainTimeoutMs: 100 });
  const hc = await spawnHc(['--envoy-admin', standin.adminUrl, '--final-scrape-wait', '20s', '--state-file', tempStateFile()]);
  try {
    const metricsPort = Number(new URL(hc.metricsUrl).port);
    assert.equal((await request(`${hc.controlUrl}/metrics`)).status, 404);
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal);
    const host = external ? external.address : '127.0.0.1';
    const m = await request(`http://${host}:${metricsPort}/metrics`);
    assert.equal(m.status, 200);
    assert.equal(m.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.match(m.body, /^gracegate_hc_terminating 0$/m);
    await waitFor('OPEN', 5_000, async () => (await hc.get('/health_check.html')).status === 200);
    assert.equal((await hc.post('/close-lb')).status, 200, 'a (manual) sequence has started');
    const started = Date.now();
    hc.proc.kill('SIGTERM');
    const last = await waitFor('the terminating flag', 5_000, async () => {
      const r = await request(`${hc.metricsUrl}/metrics`);
      return /^gracegate_hc_terminating 1$/m.test(r.body) && r;
    });
    assert.match(last.body, /^gracegate_hc_in_sequence 1$/m);
    // The scrape above may be the final one, and the exit may already have come: bounded by the
    // 20 s final-scrape wait.
    const code = await hc.exit(25_000);
    assert.equal(code, 0, `the sidecar's exit (signal ${hc.proc.signalCode})`);
    assert.ok(Date.now() - started < 10_000, 'exits right after the scrape, long before the 20 s bound');
    assert.ok(hc.logs.some((l) => l['msg'] === 'final scrape served'));
  } finally {
    await hc.kill();
    await standin.stop();
  }
});

test('gracegate hc: without a sequence (a restart), SIGTERM exits at once, whatever the final-scrape wait', async () => {
  const hc = await spawnHc(['--envoy-admin', 'http://127.0.0.1:9', '--final-scrape-wait', '20s', '--state-file', tempStateFile()]);
  const started = Date.now();
  assert.equal(await hc.stop(), 0);
  assert.ok(Date.now() - started < 3000, `${Date.now() - started} ms`);
  assert.ok(!hc.logs.some((l) => l['msg'] === 'no scrape before the final-scrape bound'));
});

test('gracegate hc: a metrics port it cannot bind is logged, and the health port still answers', async () => {
  const taken = http.createServer();
  await new Promise<void>((r) => taken.listen(0, '0.0.0.0', r));
  const port = (taken.address() as { port: number }).port;
  const hc = await spawnHc(['--envoy-admin', 'http://127.0.0.1:9', '--metrics-port', String(port), '--state-file', tempStateFile()]);
  try {
    assert.equal((await hc.get('/live')).status, 200);
    assert.ok(hc.logs.some((l) => l['msg'] === 'cannot listen on the metrics port: running without /metrics'));
    assert.equal(hc.logs.find((l) => l['msg'] === 'listening')!['metricsPort'], null);
  } finally {
    await hc.kill();
    taken.close();
  }
});

function at(machine: HcMachine, id: number): number | null {
  return machine.context.events[terminationEvent(id as EventId).key]?.at ?? null;
}

test('finalScrapeWait: no wait where nothing scraped while the pod lived; else until the next scrape is due, never past the bound', () => {
  const base = { boundMs: 30_000, metricsPort: true, sequenceRan: true, lastScrapeAt: null, scrapeIntervalMs: null, now: 100_000 };
  assert.deepEqual(finalScrapeWait(base), { waitMs: 0, reason: 'nothing scraped /metrics while the pod lived: no Prometheus to wait for' });
  assert.equal(finalScrapeWait({ ...base, sequenceRan: false, lastScrapeAt: 99_000 }).waitMs, 0, 'a restart waits for nothing');
  assert.equal(finalScrapeWait({ ...base, boundMs: 0, lastScrapeAt: 99_000 }).waitMs, 0);
  assert.equal(finalScrapeWait({ ...base, metricsPort: false, lastScrapeAt: 99_000 }).waitMs, 0);
  assert.equal(finalScrapeWait({ ...base, lastScrapeAt: 99_000 }).waitMs, 30_000, 'one scrape seen, interval unknown: the bound');
  // Scraped every 15 s, last 5 s ago: the next is due in 10 s, plus a quarter of the interval.
  const w = finalScrapeWait({ ...base, lastScrapeAt: 95_000, scrapeIntervalMs: 15_000 });
  assert.equal(w.waitMs, 10_000 + 3750);
  assert.match(w.reason, /scraped every 15 s: waiting for the next scrape, at most 13\.8 s/);
  assert.equal(finalScrapeWait({ ...base, lastScrapeAt: 95_000, scrapeIntervalMs: 60_000 }).waitMs, 30_000, 'capped by the bound');
  assert.equal(finalScrapeWait({ ...base, lastScrapeAt: 95_000, scrapeIntervalMs: 1000 }).waitMs, 0, 'the next scrape was due already');
});

test('gracegate hc: in a sequence where nothing ever scraped /metrics, SIGTERM exits at once and says why', async () => {
  const standin = await startEnvoyStandin({ hcmDrainTimeoutMs: 100 });
  const hc = await spawnHc(['--envoy-admin', standin.adminUrl, '--final-scrape-wait', '20s', '--state-file', tempStateFile()]);
  try {
    await waitFor('OPEN', 5_000, async () => (await hc.get('/health_check.html')).status === 200);
    assert.equal((await hc.post('/close-lb')).status, 200, 'a (manual) sequence has started');
    const started = Date.now();
    assert.equal(await hc.stop(), 0);
    assert.ok(Date.now() - started < 3000, `exited ${Date.now() - started} ms after SIGTERM, not at the 20 s bound`);
    const line = hc.logs.find((l) => l['msg'] === 'no final-scrape wait');
    assert.equal(line?.['reason'], 'nothing scraped /metrics while the pod lived: no Prometheus to wait for');
  } finally {
    await hc.kill();
    await standin.stop();
  }
});

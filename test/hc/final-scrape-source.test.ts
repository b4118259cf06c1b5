/**
 * Issue 34, "also found": any GET /metrics after SIGTERM counted as the final scrape, so anyone who
 * reached the metrics port could cut that wait short and the real Prometheus missed the final
 * numbers. Now only a scraper counts: one metricsScrapers names (or loopback), or, with none
 * named, a source that scraped before SIGTERM. Strangers are played from 127.0.0.x addresses.
 */
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { test } from 'node:test';
import { HcMachine } from '../../src/hc/machine';
import { createMetricsEndpoint, scrapersFrom } from '../../src/hc/metrics-server';
import { memoryStateStore } from '../../src/hc/state-file';
import { FakeClock, FakeEnvoy, testConfig } from './fakes';
import { request } from '../support/http';

const S = 1000;

async function endpointWith(scrapers: ReturnType<typeof scrapersFrom>, terminating: () => number | null) {
  const clock = new FakeClock();
  const machine = new HcMachine({ config: testConfig(), clock, envoy: new FakeEnvoy(), store: memoryStateStore(), log: () => {} });
  const context = { version: 'test', envoyVersion: () => null, lastCount: () => null, terminatingSince: terminating };
  const endpoint = createMetricsEndpoint(machine, context, clock, scrapers);
  endpoint.server.listen(0, '127.0.0.1');
  await new Promise((r) => endpoint.server.once('listening', r));
  const port = (endpoint.server.address() as net.AddressInfo).port;
  const scrape = (from: string) => request(`http://127.0.0.1:${port}/metrics`, { localAddress: from });
  return { clock, machine, endpoint, scrape, close: () => (endpoint.server.close(), machine.stop()) };
}

test('without named scrapers: after SIGTERM only a source that scraped before it is the final scrape', async () => {
  let terminatingSince: number | null = null;
  const e = await endpointWith(scrapersFrom([]), () => terminatingSince);
  try {
    await e.scrape('127.0.0.9'); // the pod's Prometheus, on its interval
    assert.notEqual(e.endpoint.lastScrapeAt(), null);
    terminatingSince = e.clock.now();
    const final = e.endpoint.nextScrape(30 * S);
    let settled = false;
    void final.then(() => (settled = true));
    assert.equal((await e.scrape('127.0.0.2')).status, 200, 'a stranger still reads /metrics');
    await e.clock.advance(0);
    assert.equal(settled, false, "a stranger's GET is not the final scrape");
    await e.scrape('127.0.0.9');
    assert.equal(await final, true, "the pod's Prometheus is");
  } finally {
    e.close();
  }
});

test('with named scrapers (spec.observability.scrapers): only they and loopback count, before and after SIGTERM', async () => {
  const e = await endpointWith(scrapersFrom(['127.0.8.0/24']), () => 1);
  try {
    await e.scrape('127.0.0.2');
    assert.equal(e.endpoint.lastScrapeAt(), null, 'a stranger is no scrape');
    const final = e.endpoint.nextScrape(30 * S);
    await e.scrape('127.0.8.7');
    assert.equal(await final, true);
    assert.notEqual(e.endpoint.lastScrapeAt(), null);
  } finally {
    e.close();
  }
});

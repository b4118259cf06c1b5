/**
 * What the sidecar's stats checks assume, on the real pinned Envoys: an idle Envoy that never had a
 * connection still shows the listener gauges the counting rules select (at 0), so "no counted line
 * means cannot count" never fires on a real proxy, and every value is a non-negative integer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_COUNTING_EXCLUDE, DEFAULT_COUNTING_INCLUDE } from '../../src/hc/config';
import { createEnvoyAdmin } from '../../src/hc/envoy-admin';
import { compileCounting, parseStatsText } from '../../src/hc/envoy-stats';
import { pinnedEnvoys, startEnvoy, type RealEnvoy } from '../support/real-envoy';
import { request } from './helpers';

const rules = { include: DEFAULT_COUNTING_INCLUDE, exclude: DEFAULT_COUNTING_EXCLUDE };

for (const pinned of pinnedEnvoys()) {
  describe(`real Envoy ${pinned.version}: the stats the sidecar reads`, () => {
    let envoy: RealEnvoy;
    before(async () => {
      envoy = await startEnvoy({ version: pinned.version });
    });
    after(() => envoy.stop());

    test('before any traffic the counted listener gauges are there, at 0, and the sidecar counts 0', async () => {
      const counter = compileCounting(rules);
      const text = (await envoy.admin('GET', `/stats?filter=${encodeURIComponent(counter.filter)}`)).body;
      const stats = parseStatsText(text);
      const counted = counter.count(stats).counted;
      assert.ok(counted.length > 0, text);
      assert.ok(counted.every((s) => s.value === 0), text);
      const admin = createEnvoyAdmin({ baseUrl: envoy.adminUrl, timeoutMs: 2000, counting: rules });
      assert.equal(await admin.inFlight(), 0);
    });

    test('with traffic, the parser reads the whole /stats: every value non-negative, the counted ones exact', async () => {
      assert.equal((await request(`${envoy.trafficUrl}/`)).status, 200);
      const stats = parseStatsText((await envoy.admin('GET', '/stats')).body);
      assert.ok(stats.length > 100, `${stats.length} stats`);
      assert.ok(stats.every((s) => Number.isInteger(s.value) && s.value >= 0));
      const counter = compileCounting(rules);
      assert.ok(counter.count(stats).counted.every((s) => Number.isSafeInteger(s.value)));
    });
  });
}

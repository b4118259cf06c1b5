/**
 * What the sidecar's stats checks assume, on the real pinned Envoys: an idle Envoy that never had a
 * connection still shows the listener gauges the counting rules select (at 0) once the pod changes'
 * stats matcher suffixes are in, so "no counted line means cannot count" never fires on a gracegate
 * pod, and every value is a non-negative integer. On Istio's default matcher it does fire: there
 * the gauges do not exist (the defect the pod changes' `downstream_cx_active` suffix fixes).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_COUNTING_EXCLUDE, DEFAULT_COUNTING_INCLUDE } from '../../src/contract/hc-config';
import { createEnvoyAdmin } from '../../src/hc/envoy-admin';
import { compileCounting, parseStatsText, StatsFormatError } from '../../src/hc/envoy-stats';
import { COUNTING_STATS_SUFFIXES } from '../../src/contract/envoy-stat-names';
import { pinnedEnvoys, startEnvoy, type RealEnvoy } from '../support/real-envoy';
import { request } from '../support/http';

const rules = { include: DEFAULT_COUNTING_INCLUDE, exclude: DEFAULT_COUNTING_EXCLUDE };

for (const pinned of pinnedEnvoys()) {
  describe(`real Envoy ${pinned.version}: the stats the sidecar reads`, () => {
    let envoy: RealEnvoy;
    before(async () => {
      envoy = await startEnvoy({ version: pinned.version, statsInclusionSuffixes: [...COUNTING_STATS_SUFFIXES] });
    });
    after(() => envoy.stop());

    test("on Istio's default stats matcher (no suffixes added) the counted gauges do not exist: cannot count, never 0", async () => {
      const plain = await startEnvoy({ version: pinned.version });
      try {
        const counter = compileCounting(rules);
        const stats = parseStatsText((await plain.admin('GET', `/stats?filter=${encodeURIComponent(counter.filter)}`)).body);
        assert.deepEqual(
          stats.filter((s) => /downstream_(cx|rq)_active$/.test(s.name) && !s.name.includes('admin')),
          [],
          'Istio keeps neither gauge by default',
        );
        assert.throws(() => counter.count(stats), StatsFormatError);
      } finally {
        await plain.stop();
      }
    });

    test('before any traffic the counted listener gauges are there, at 0, and the sidecar counts 0', async () => {
      const counter = compileCounting(rules);
      const text = (await envoy.admin('GET', `/stats?filter=${encodeURIComponent(counter.filter)}`)).body;
      const stats = parseStatsText(text);
      const counted = counter.count(stats).counted;
      assert.ok(counted.length > 0, text);
      assert.ok(
        counted.every((s) => s.value === 0),
        text,
      );
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

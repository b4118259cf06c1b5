/**
 * The sidecar counts on a real Envoy dressed as an Istio gateway the way Istio really names its
 * stats: Istio's stats tags and the HTTP connection manager prefix with Istio's `;` delimiter
 * (`http.outbound_0.0.0.0_8080;.downstream_rq_active`, istio/istio pilot/pkg/networking/core/gateway.go
 * and util.DelimitedStatsPrefix), and Istio's default stats matcher plus exactly what the pod
 * changes add (proxyStatsMatcher). Before the pod changes added `downstream_cx_active`, a default
 * gateway had no counted line at all and the sidecar stayed in FAULT.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_COUNTING_EXCLUDE, DEFAULT_COUNTING_INCLUDE } from '../../src/contract/hc-config';
import { createEnvoyAdmin } from '../../src/hc/envoy-admin';
import { compileCounting, countingBasis, parseStatsText } from '../../src/hc/envoy-stats';
import { planGateway } from '../../src/plan/plan-gateway';
import { proxyStatsMatcher } from '../../src/pod/pod-changes';
import { ISTIO_HCM_PREFIX, startIstioEnvoy } from '../support/istio-envoy';
import { pinnedEnvoys } from '../support/real-envoy';
import { resolved } from '../support/spec-builder';
import { request } from '../support/http';

const rules = { include: DEFAULT_COUNTING_INCLUDE, exclude: DEFAULT_COUNTING_EXCLUDE };

for (const pinned of pinnedEnvoys()) {
  test(`Envoy ${pinned.version} under Istio's stat names and matcher: with the pod changes' suffixes the sidecar counts each request under the ';' prefix`, async () => {
    const suffixes = proxyStatsMatcher(planGateway(resolved())).inclusionSuffixes;
    const envoy = await startIstioEnvoy({ version: pinned.version, statsInclusionSuffixes: suffixes });
    try {
      const counter = compileCounting(rules);
      const read = async () =>
        counter.count(
          parseStatsText(
            await (await fetch(`${envoy.adminUrl}/stats?filter=${encodeURIComponent(counter.filter)}`, { signal: AbortSignal.timeout(2000) })).text(),
          ),
        );
      const idle = await read();
      assert.equal(idle.total, 0);
      assert.deepEqual(idle.hcms, { [ISTIO_HCM_PREFIX]: 'requests' }, "the gateway's HCM, ';' included, counted by its requests");
      assert.equal(countingBasis(idle), 'requests');

      const held = request(`${envoy.trafficUrl}/slow?ms=1500`, { timeoutMs: 5000 });
      const admin = createEnvoyAdmin({ baseUrl: envoy.adminUrl, timeoutMs: 2000, counting: rules });
      const deadline = Date.now() + 1200;
      let seen = 0;
      while (Date.now() < deadline && seen === 0) seen = await admin.inFlight();
      assert.equal(seen, 1, 'the held request, once: its connection is not counted a second time');
      const during = await read();
      assert.ok(
        during.counted.some((s) => s.name === `http.${ISTIO_HCM_PREFIX}.downstream_rq_active` && s.value === 1),
        JSON.stringify(during.counted),
      );
      assert.equal((await held).status, 200);
      assert.equal(await admin.inFlight(), 0);
    } finally {
      await envoy.stop();
    }
  });
}

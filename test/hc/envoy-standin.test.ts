/**
 * What only the stand-in has: the health_check filter, the stats formats and its fault-injection
 * extensions. Its drain semantics are held to real Envoy's in envoy-conformance.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startEnvoyStandin, type EnvoyStandin } from '../support/envoy-standin';
import { request } from '../support/http';
import { waitFor } from '../support/wait';

async function withStandin(options: Parameters<typeof startEnvoyStandin>[0], body: (s: EnvoyStandin) => Promise<void>): Promise<void> {
  const standin = await startEnvoyStandin(options);
  try {
    await body(standin);
  } finally {
    await standin.stop();
  }
}

const post = (s: EnvoyStandin, p: string) => request(`${s.adminUrl}${p}`, { method: 'POST' });

describe('admin endpoints', () => {
  test('/healthcheck/fail|ok flip /ready, /server_info and the health_check filter path', async () => {
    await withStandin({}, async (s) => {
      assert.deepEqual([(await request(`${s.adminUrl}/ready`)).status, (await request(`${s.adminUrl}/ready`)).body], [200, 'LIVE\n']);
      await post(s, '/healthcheck/fail');
      const ready = await request(`${s.adminUrl}/ready`);
      assert.deepEqual([ready.status, ready.body], [503, 'DRAINING\n']);
      assert.equal(JSON.parse((await request(`${s.adminUrl}/server_info`)).body).state, 'DRAINING');
      const hc = await request(`${s.trafficUrl}/healthz`);
      assert.equal(hc.status, 503);
      assert.equal(hc.headers['x-envoy-immediate-health-check-fail'], 'true');
      await post(s, '/healthcheck/ok');
      assert.equal((await request(`${s.trafficUrl}/healthz`)).status, 200);
    });
  });

  test('/stats text (filter, usedonly), json and prometheus carry the pitfalls', async () => {
    await withStandin({}, async (s) => {
      const text = (await request(`${s.adminUrl}/stats`)).body;
      for (const line of [
        'cluster.xds-grpc.upstream_rq_active: 1',
        'cluster.sds-grpc.upstream_rq_active: 1',
        'http.admin.downstream_rq_active: 1',
        'listener.0.0.0.0_15021.downstream_cx_active: 1',
        'listener.0.0.0.0_15090.downstream_cx_active: 1',
        'listener.0.0.0.0_8080.worker_0.downstream_cx_active: 0',
        'http.outbound_0.0.0.0_8080.downstream_rq_active: 0',
      ]) {
        assert.ok(text.includes(`${line}\n`), line);
      }
      const used = (await request(`${s.adminUrl}/stats?usedonly&filter=${encodeURIComponent('^listener\\..*downstream_cx_active$')}`)).body;
      assert.ok(!used.includes('0.0.0.0_8080'), 'usedonly hides a listener that never had a connection');
      assert.equal((await request(`${s.adminUrl}/stats?filter=(`)).status, 400);
      const json = JSON.parse((await request(`${s.adminUrl}/stats?format=json&filter=xds`)).body) as { stats: { name?: string; value?: number }[] };
      assert.deepEqual(
        json.stats.filter((x) => x.name).map((x) => x.name),
        ['cluster.xds-grpc.upstream_cx_active', 'cluster.xds-grpc.upstream_rq_active'],
      );
      const prom = (await request(`${s.adminUrl}/stats/prometheus`)).body;
      assert.match(prom, /^envoy_http_downstream_rq_active\{envoy_http_conn_manager_prefix="outbound_0\.0\.0\.0_8080"\} 0$/m);
      assert.match(prom, /^envoy_cluster_upstream_rq_active\{envoy_cluster_name="xds-grpc"\} 1$/m);
      assert.match(prom, /^# TYPE envoy_listener_downstream_cx_active gauge$/m);
    });
  });

  test('stand-in extensions: /standin/counts and a timed /standin/fault', async () => {
    await withStandin({}, async (s) => {
      const counts = JSON.parse((await request(`${s.adminUrl}/standin/counts`)).body);
      assert.equal(counts.listening, true);
      await post(s, '/standin/fault?mode=down&forMs=200');
      await assert.rejects(request(`${s.adminUrl}/ready`), /ECONNREFUSED/);
      await waitFor('admin back', 3000, async () => (await request(`${s.adminUrl}/ready`)).status === 200);
    });
  });
});

/**
 * The real-Envoy test rig itself, on each pinned version: the binary is the pinned one, the
 * bootstrap gives the Istio gateway's stat names and traps, and every kind of upstream traffic
 * passes through it.
 */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { TRAFFIC_HCM_PREFIX } from '../support/istio-like-bootstrap';
import { pinnedEnvoys, startEnvoy, type RealEnvoy } from '../support/real-envoy';
import { request } from '../support/http';

function firstChunk(url: string): Promise<{ status: number; type: string; chunk: string; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, signal: AbortSignal.timeout(5000) }, (res) => {
      res.once('data', (c: Buffer) =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), chunk: c.toString(), close: () => req.destroy() }),
      );
      res.on('error', () => {});
    });
    req.on('error', reject);
  });
}

for (const pinned of pinnedEnvoys()) {
  describe(`real Envoy ${pinned.version} (${pinned.role})`, () => {
    let envoy: RealEnvoy;
    before(async () => {
      envoy = await startEnvoy({ version: pinned.version });
    });
    after(() => envoy.stop());

    test('is the pinned binary, LIVE, with pilot-agent drain flags', async () => {
      assert.equal(envoy.version, pinned.version);
      assert.match(envoy.versionString, new RegExp(`^[0-9a-f]{40}/${pinned.version.replace(/\./g, '\\.')}/Clean/RELEASE/`));
      const info = JSON.parse((await envoy.admin('GET', '/server_info')).body) as { state: string; command_line_options: Record<string, unknown> };
      assert.equal(info.state, 'LIVE');
      assert.equal(info.command_line_options['drain_time'], '45s');
      assert.equal(String(info.command_line_options['drain_strategy']).toLowerCase(), 'immediate');
    });

    test("has Istio's stat names, its xds-grpc trap, and Istio's stats matcher (no downstream_rq_active, no downstream_cx_active)", async () => {
      const stats = await envoy.stats();
      assert.equal(stats.get('cluster.xds-grpc.upstream_rq_active'), 1, 'the permanent ADS stream');
      assert.ok(stats.has('server.live'), 'a kept prefix');
      for (const name of [
        'listener.0.0.0.0_8080.downstream_cx_active',
        'listener.0.0.0.0_8080.worker_1.downstream_cx_active',
        `http.${TRAFFIC_HCM_PREFIX}.downstream_cx_active`,
        `http.${TRAFFIC_HCM_PREFIX}.downstream_rq_active`,
      ]) {
        assert.equal(stats.has(name), false, `Istio's default stats matcher drops ${name} (without EXIT_ON_ZERO_ACTIVE_CONNECTIONS)`);
      }
    });

    test('with EXIT_ON_ZERO_ACTIVE_CONNECTIONS Istio keeps every downstream_cx_active, per listener and per worker', async () => {
      const exiting = await startEnvoy({ version: pinned.version, exitOnZeroActiveConnections: true });
      try {
        const stats = await exiting.stats();
        for (const name of [
          'listener.0.0.0.0_8080.downstream_cx_active',
          'listener.0.0.0.0_8080.worker_1.downstream_cx_active',
          'listener.0.0.0.0_15021.downstream_cx_active',
          'listener.0.0.0.0_15090.downstream_cx_active',
          `http.${TRAFFIC_HCM_PREFIX}.downstream_cx_active`,
          'listener.admin.downstream_cx_active',
        ]) {
          assert.ok(stats.has(name), `${name} exists`);
        }
        assert.equal(stats.has(`http.${TRAFFIC_HCM_PREFIX}.downstream_rq_active`), false);
      } finally {
        await exiting.stop();
      }
    });

    test('serves /slow, a chunked stream, SSE and a WebSocket through the traffic listener; 15021 and 15090 answer', async () => {
      assert.equal((await request(`${envoy.trafficUrl}/slow?ms=20`)).body, 'slow 20\n');
      assert.equal((await request(`${envoy.trafficUrl}/stream?chunks=3&intervalMs=5`)).body, 'chunk 0\nchunk 1\nchunk 2\n');
      const sse = await firstChunk(`${envoy.trafficUrl}/sse?events=0&intervalMs=50`);
      sse.close();
      assert.equal(sse.type, 'text/event-stream');
      assert.match(sse.chunk, /^id: 0\ndata: event 0\n\n/);
      const ws = new WebSocket(`ws://127.0.0.1:${envoy.trafficPort}/ws`);
      const echoed = await new Promise<string>((resolve, reject) => {
        ws.once('open', () => ws.send('hello'));
        ws.once('message', (m) => resolve(m.toString()));
        ws.once('error', reject);
      });
      ws.terminate();
      assert.equal(echoed, 'hello');
      assert.equal((await request(`${envoy.readinessUrl}/healthz/ready`)).status, 200);
      assert.match((await request(`${envoy.prometheusUrl}/stats/prometheus`)).body, /envoy_cluster_upstream_rq_active\{envoy_cluster_name="xds-grpc"\} 1/);
    });
  });
}

describe('real Envoy options', () => {
  test('statsInclusionSuffixes adds downstream_rq_active, as proxyStatsMatcher.inclusionSuffixes does on Istio', async () => {
    const envoy = await startEnvoy({ version: pinnedEnvoys()[0]!.version, statsInclusionSuffixes: ['downstream_rq_active'] });
    try {
      const stats = await envoy.stats('downstream_rq_active$');
      assert.equal(stats.get(`http.${TRAFFIC_HCM_PREFIX}.downstream_rq_active`), 0);
      assert.equal(stats.get('http.admin.downstream_rq_active'), 1, 'the stats request counts itself');
    } finally {
      await envoy.stop();
    }
  });
});

/**
 * The stand-in's drain semantics (FACTS.md §4), and the reason the sidecar sends
 * `drain_listeners?graceful` then `drain_listeners`: under a client that keeps sending, only
 * stopping the listeners lets the connection count converge to 0.
 */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import { describe, test } from 'node:test';
import { startEnvoyStandin, type EnvoyStandin } from '../support/envoy-standin';
import { request, waitFor } from './helpers';

async function withStandin(options: Parameters<typeof startEnvoyStandin>[0], body: (s: EnvoyStandin) => Promise<void>): Promise<void> {
  const standin = await startEnvoyStandin(options);
  try {
    await body(standin);
  } finally {
    await standin.stop();
  }
}

const post = (s: EnvoyStandin, p: string) => request(`${s.adminUrl}${p}`, { method: 'POST' });

/** Keeps `workers` keep-alive clients sending 20-80 ms requests until stopped; counts the outcomes. */
function load(s: EnvoyStandin, workers: number) {
  const outcome = { ok: 0, refused: 0, other: [] as string[] };
  let running = true;
  const agents = Array.from({ length: workers }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const loops = agents.map(async (agent) => {
    while (running) {
      try {
        const ms = 20 + Math.floor(Math.random() * 60);
        const r = await request(`${s.trafficUrl}/slow?ms=${ms}`, { agent, timeoutMs: 2000 });
        if (r.status === 200) outcome.ok++;
        else outcome.other.push(`HTTP ${r.status}`);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ECONNREFUSED') {
          outcome.refused++;
          await new Promise((r) => setTimeout(r, 10)); // an LB would re-send elsewhere
        } else outcome.other.push(code ?? (err as Error).message);
      }
    }
  });
  return {
    outcome,
    async stop() {
      running = false;
      await Promise.all(loops);
      for (const a of agents) a.destroy();
    },
  };
}

describe('why graceful, then plain', () => {
  test('graceful&skip_exit under load: the listener keeps accepting and the count never converges', async () => {
    await withStandin({}, async (s) => {
      const traffic = load(s, 8);
      await waitFor('load running', () => s.counts().connections >= 4);
      assert.equal((await post(s, '/drain_listeners?graceful&skip_exit')).status, 200);
      const okAtDrain = traffic.outcome.ok;
      const samples: number[] = [];
      const until = Date.now() + 800;
      while (Date.now() < until) {
        samples.push(s.counts().connections);
        await new Promise((r) => setTimeout(r, 10));
      }
      await traffic.stop();
      const busy = samples.filter((n) => n > 0).length / samples.length;
      assert.ok(busy > 0.75, `connections > 0 in ${Math.round(busy * 100)}% of samples`);
      assert.ok(traffic.outcome.ok - okAtDrain > 40, 'requests keep arriving on new connections after the drain');
      assert.equal(traffic.outcome.refused, 0, 'nothing is refused: new connections keep arriving');
      assert.ok(s.counts().listening);
    });
  });

  test('graceful then plain under load: new connects refused, in-flight finish, the count reaches 0', async () => {
    await withStandin({ hcmDrainTimeoutMs: 100 }, async (s) => {
      const traffic = load(s, 8);
      await waitFor('load running', () => s.counts().connections >= 4);
      const okBefore = traffic.outcome.ok;
      assert.equal((await post(s, '/drain_listeners?graceful')).status, 200);
      assert.equal((await post(s, '/drain_listeners')).status, 200);
      await waitFor('connections reach 0', () => s.counts().connections === 0, 2000, 5);
      await waitFor('clients see refusals', () => traffic.outcome.refused > 0, 2000);
      await traffic.stop();
      assert.deepEqual(traffic.outcome.other, [], 'no resets, no errors: every accepted request completed');
      assert.ok(traffic.outcome.ok >= okBefore);
      assert.equal(s.counts().listening, false);
    });
  });
});

describe('drain_listeners semantics', () => {
  test('graceful: Connection: close on responses, idle keep-alive connections closed after drain_timeout, still accepting', async () => {
    await withStandin({ hcmDrainTimeoutMs: 100 }, async (s) => {
      const idleAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const busyAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        await request(`${s.trafficUrl}/`, { agent: idleAgent });
        const idleSocket = await waitFor('an idle pooled socket', () => Object.values(idleAgent.freeSockets).flat()[0]);
        const idleClosed = new Promise((r) => idleSocket!.once('close', r));
        const busy = request(`${s.trafficUrl}/slow?ms=200`, { agent: busyAgent });
        await waitFor('busy request in flight', () => s.counts().requests === 1);
        await post(s, '/drain_listeners?graceful');
        await idleClosed;
        const busyReply = await busy;
        assert.equal(busyReply.status, 200);
        assert.equal(busyReply.headers.connection, 'close');
        const fresh = await request(`${s.trafficUrl}/`);
        assert.equal(fresh.status, 200, 'graceful alone keeps accepting');
        assert.equal(fresh.headers.connection, 'close');
        assert.equal((await post(s, '/drain_listeners?graceful')).status, 200, 'a repeated graceful call is a 200 no-op');
        assert.ok(s.counts().listening);
      } finally {
        idleAgent.destroy();
        busyAgent.destroy();
      }
    });
  });

  test('graceful stops the listeners after --drain-time-s (unless skip_exit)', async () => {
    await withStandin({ drainTimeS: 0.2 }, async (s) => {
      await post(s, '/drain_listeners?graceful');
      await waitFor('listeners stopped', () => !s.counts().listening, 2000);
      await assert.rejects(request(`${s.trafficUrl}/`), /ECONNREFUSED/);
    });
  });

  test('plain alone: refuses new connects; existing connections continue, not told to close (no runtime guard)', async () => {
    await withStandin({}, async (s) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        await request(`${s.trafficUrl}/`, { agent });
        await post(s, '/drain_listeners');
        await assert.rejects(request(`${s.trafficUrl}/`), /ECONNREFUSED/);
        const reused = await request(`${s.trafficUrl}/`, { agent });
        assert.equal(reused.status, 200);
        assert.equal(reused.headers.connection, 'keep-alive', 'without non_graceful_drain_notifies_connections nothing tells it to close');
        assert.equal(s.counts().connections, 1);
        assert.equal((await post(s, '/drain_listeners?skip_exit')).status, 400, 'skip_exit requires graceful');
      } finally {
        agent.destroy();
      }
    });
  });

  test('plain with the 2026 runtime guard notifies existing connections', async () => {
    await withStandin({ plainDrainNotifiesConnections: true }, async (s) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const busy = request(`${s.trafficUrl}/slow?ms=150`, { agent });
        await waitFor('in flight', () => s.counts().requests === 1);
        await post(s, '/drain_listeners');
        assert.equal((await busy).headers.connection, 'close');
        await waitFor('connection closed', () => s.counts().connections === 0);
      } finally {
        agent.destroy();
      }
    });
  });

  test('inboundonly leaves outbound (gateway) listeners alone; GET is refused like Envoy', async () => {
    await withStandin({}, async (s) => {
      assert.equal((await post(s, '/drain_listeners?graceful&inboundonly')).status, 200);
      assert.equal((await post(s, '/drain_listeners?inboundonly')).status, 200);
      const r = await request(`${s.trafficUrl}/`);
      assert.equal(r.status, 200);
      assert.equal(s.counts().draining, false);
      assert.ok(s.counts().listening);
      const get = await request(`${s.adminUrl}/drain_listeners`);
      assert.equal(get.status, 405);
      assert.equal(get.body, 'Method GET not allowed, POST required.');
    });
  });
});

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
      assert.deepEqual(json.stats.filter((x) => x.name).map((x) => x.name), ['cluster.xds-grpc.upstream_cx_active', 'cluster.xds-grpc.upstream_rq_active']);
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
      await waitFor('admin back', async () => (await request(`${s.adminUrl}/ready`)).status === 200, 3000);
    });
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import WebSocket from 'ws';
import { createEnvoyAdmin } from '../../../src/hc/envoy-admin';
import type { CountingRules } from '../../../src/hc/envoy-stats';
import { planGateway } from '../../../src/plan/plan-gateway';
import { hcConfigFor } from '../../../src/pod/hc-config';
import { proxyStatsMatcher } from '../../../src/pod/pod-changes';
import { pinnedEnvoys, startEnvoy } from '../../support/real-envoy';
import { openSse } from '../../support/sse-client';
import { resolved } from '../../support/spec-builder';
import { startTcpEcho } from '../../support/tcp-echo';
import { request } from '../../support/http';
import { spawnHc, tempStateFile } from '../../support/hc';
import { waitFor } from '../../support/wait';

// The sidecar's count on a real Envoy under Istio's stats matcher plus the pod changes' inclusion
// suffixes, with a WebSocket, an SSE stream and a TCP connection open: the long-lived ones are
// reported apart (GET /state envoy.proxy.lastCount) where Envoy's stats allow it; SSE cannot be.
const withWebsocket = planGateway(
  resolved({
    spec: { traffic: { longRequestP99Seconds: 20, longLived: { kinds: ['websocket', 'sse', 'tcp'], clientsReconnect: true, maxStreamLifetimeSeconds: 60 } } },
  }),
);
const without = planGateway(resolved({ spec: { traffic: { longRequestP99Seconds: 20 } } }));

/**
 * The real sidecar on that Envoy: a drain the three streams hold to its timeout says what held it
 * (the warning, event [4]'s note), GET /state carries the parts, and /metrics has them as a gauge.
 */
async function sidecarReportsThemApart(adminUrl: string): Promise<void> {
  const hc = await spawnHc([
    '--envoy-admin',
    adminUrl,
    '--sequence',
    'health-first',
    '--lb-buffer',
    '200ms',
    '--drain-timeout',
    '1s',
    '--poll-interval',
    '100ms',
    '--state-file',
    tempStateFile(),
  ]);
  try {
    assert.equal((await hc.post('/drain?witness=none')).status, 202);
    const state = await waitFor(
      'the drain timeout',
      10_000,
      async () => {
        const s = await hc.state();
        return s.drainTimedOut ? s : undefined;
      },
      100,
    );
    assert.deepEqual(state.envoy.proxy.lastCount, { total: 3, requests: 2, otherConnections: 1, upgrades: 1 });
    const note = state.events.find((e) => e.id === 4)!.note ?? '';
    assert.match(
      note,
      /drain timeout: 3 still in flight \(of them 1 WebSocket \(upgraded\) and 1 TCP\/passthrough connection\(s\): long-lived, told nothing by the drain\)/,
    );
    assert.ok(
      hc.logs.some((l) => l['level'] === 'warn' && /drain timeout reached .*1 WebSocket/.test(String(l['msg']))),
      'the warning names them',
    );
    const metrics = (await request(`${hc.metricsUrl}/metrics`)).body;
    assert.match(metrics, /^gracegate_hc_long_lived_connections\{kind="websocket"\} 1$/m);
    assert.match(metrics, /^gracegate_hc_long_lived_connections\{kind="tcp"\} 1$/m);
  } finally {
    await hc.kill();
  }
}

for (const pinned of pinnedEnvoys()) {
  test(`Envoy ${pinned.version}: the sidecar counts a WebSocket, an SSE stream and a TCP connection, and reports the WebSocket and the TCP connection apart`, async () => {
    assert.ok(proxyStatsMatcher(withWebsocket).inclusionSuffixes.includes('downstream_cx_upgrades_active'));
    assert.ok(!proxyStatsMatcher(without).inclusionSuffixes.includes('downstream_cx_upgrades_active'), 'only a plan with WebSockets asks for the gauge');
    for (const plan of [withWebsocket, without]) {
      const echo = await startTcpEcho();
      const envoy = await startEnvoy({
        version: pinned.version,
        tcpUpstreamPort: echo.port,
        statsInclusionSuffixes: proxyStatsMatcher(plan).inclusionSuffixes,
      });
      const ws = new WebSocket(`ws://127.0.0.1:${envoy.trafficPort}/ws`);
      const wsOpen = new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
      const tcp = net.connect(envoy.tcpProxyPort!, '127.0.0.1');
      const tcpOpen = new Promise<void>((resolve, reject) => (tcp.once('connect', () => resolve()), tcp.once('error', reject)));
      const sse = openSse(`${envoy.trafficUrl}/sse?events=0&intervalMs=100`, () => {});
      try {
        await Promise.all([wsOpen, tcpOpen, sse.response]);
        tcp.write('x\n');
        await new Promise((r) => setTimeout(r, 200));
        const admin = createEnvoyAdmin({ baseUrl: envoy.adminUrl, timeoutMs: 2000, counting: hcConfigFor(plan).counting as CountingRules });
        assert.equal(await admin.inFlight(), 3, 'two streams and one TCP connection in flight');
        const last = admin.profile().lastCount!;
        assert.equal(last.requests, 2);
        assert.equal(last.otherConnections, 1, 'the TCP connection, apart');
        assert.equal(last.upgrades, plan === withWebsocket ? 1 : null, 'the WebSocket, apart, when the pod keeps the gauge; unknown otherwise');
        if (plan === withWebsocket) await sidecarReportsThemApart(envoy.adminUrl);
      } finally {
        ws.terminate();
        tcp.destroy();
        sse.request.destroy();
        await envoy.stop();
        await echo.close();
      }
    }
  });
}

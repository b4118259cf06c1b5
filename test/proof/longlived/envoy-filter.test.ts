/**
 * The stream limits' EnvoyFilter, checked against the real Envoy of the tests: its MERGE patches,
 * applied to the gateway listeners as istiod applies them, are accepted by each pinned Envoy and
 * land where the long-lived measurement set its limits (docs/long-lived.md, "With the plan's
 * limits"), so what was measured is what the EnvoyFilter sets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminRequest } from '../../../src/hc/envoy-admin';
import { planGateway } from '../../../src/plan/plan-gateway';
import { streamLimitsObject } from '../../../src/pod/extra-objects';
import { podChanges } from '../../../src/pod/pod-changes';
import { istioLikeBootstrap, TCP_LISTENER, TRAFFIC_LISTENER } from '../../support/istio-like-bootstrap';
import { pinnedEnvoys, startEnvoy } from '../../support/real-envoy';
import { resolved } from '../../support/spec-builder';
import { startTcpEcho } from '../../support/tcp-echo';

const plan = planGateway(
  resolved({
    spec: {
      traffic: { longRequestP99Seconds: 20, longLived: { kinds: ['websocket', 'grpc-stream', 'tcp'], clientsReconnect: true, maxStreamLifetimeSeconds: 60 } },
    },
  }),
);
const filter = streamLimitsObject(podChanges(plan))!;
const patches = (filter['spec'] as { configPatches: unknown[] }).configPatches;

type Obj = Record<string, any>;

test("the EnvoyFilter sets exactly the fields the measurement set, at the plan's values", () => {
  const ports = { admin: 1, traffic: 2, readiness: 3, prometheus: 4, upstream: 5, xds: 6 };
  const measuredRig = istioLikeBootstrap(ports, {
    tcpUpstreamPort: 7,
    hcmMaxConnectionDurationMs: 54_000,
    hcmMaxStreamDurationMs: 60_000,
    tcpMaxConnectionDurationMs: 60_000,
  });
  const withFilter = istioLikeBootstrap(ports, { tcpUpstreamPort: 7, envoyFilterPatches: patches });
  assert.deepEqual(withFilter, measuredRig, 'max_connection_duration 54 s (60 - max(1, ceil(6))), max_stream_duration 60 s, tcp 60 s: the same bootstrap');
  assert.notDeepEqual(istioLikeBootstrap(ports, { tcpUpstreamPort: 7 }), measuredRig, 'and without the patches it differs');
});

for (const pinned of pinnedEnvoys()) {
  test(`Envoy ${pinned.version} accepts the EnvoyFilter's patches and reports the limits in /config_dump`, async () => {
    const echo = await startTcpEcho();
    const envoy = await startEnvoy({ version: pinned.version, tcpUpstreamPort: echo.port, envoyFilterPatches: patches });
    try {
      const dump = JSON.parse((await adminRequest(envoy.adminUrl, 'GET', '/config_dump?resource=static_listeners', 5000)).body) as { configs: Obj[] };
      const listener = (name: string) => dump.configs.map((c) => c['listener']).find((l: Obj) => l?.['name'] === name) as Obj;
      const hcm = listener(TRAFFIC_LISTENER)['filter_chains'][0]['filters'][0]['typed_config'] as Obj;
      assert.deepEqual(
        { connection: hcm['common_http_protocol_options']['max_connection_duration'], stream: hcm['common_http_protocol_options']['max_stream_duration'] },
        { connection: '54s', stream: '60s' },
      );
      const tcp = listener(TCP_LISTENER)['filter_chains'][0]['filters'][0]['typed_config'] as Obj;
      assert.equal(tcp['max_downstream_connection_duration'], '60s');
      assert.ok(tcp['stat_prefix'], "the merge kept the proxy's own fields");
    } finally {
      await envoy.stop();
      await echo.close();
    }
  });
}

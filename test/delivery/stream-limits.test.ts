/**
 * The long-lived plan's stream limits reach the gateway on every delivery path as one EnvoyFilter
 * (src/pod/extra-objects.ts streamLimitsObject): synth's manifests.yaml (with each limit's reason
 * beside it), post-render, the Kustomize component, the constructs and the Gateway API path. Its
 * effect on real Envoy: test/proof/longlived/envoy-filter.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Testing } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { GracefulGateway } from '../../src/delivery/cdk8s/constructs';
import { gatewayApiManifestObjects } from '../../src/delivery/gateway-api/parameters';
import { kustomizeComponent } from '../../src/delivery/kustomize/component';
import { manifestsYaml } from '../../src/delivery/manifests';
import { renderPlanText } from '../../src/emit/plan-text';
import { postRender } from '../../src/delivery/post-render/post-render';
import { TargetRule } from '../../src/delivery/target';
import { planGateway } from '../../src/plan/plan-gateway';
import { extraObjects, podChanges, streamLimitsObject } from '../../src/pod';
import { REPO_ROOT } from '../support/repo';
import { resolved } from '../support/spec-builder';
import { testChart } from '../support/cdk8s';

const longLived = (kinds: string[], maxStreamLifetimeSeconds?: number) => ({
  kinds,
  clientsReconnect: true,
  ...(maxStreamLifetimeSeconds === undefined ? {} : { maxStreamLifetimeSeconds }),
});
const spec = (ll: object | undefined, more: Record<string, unknown> = {}) =>
  resolved({
    metadata: { name: 'igw-public', namespace: 'istio-ingress' },
    spec: { ...more, traffic: { longRequestP99Seconds: 20, ...(ll ? { longLived: ll } : {}) } },
  });
const changesOf = (ll: object | undefined, more: Record<string, unknown> = {}) => podChanges(planGateway(spec(ll, more)));
const docs = (text: string) =>
  parseAllDocuments(text)
    .map((d) => d.toJSON() as Record<string, any>)
    .filter((d) => d);
const isFilter = (o: Record<string, any>) => o['kind'] === 'EnvoyFilter';

test("the EnvoyFilter: the plan's limits on every HTTP connection manager and TCP proxy of the gateway's pods", () => {
  const f = streamLimitsObject(changesOf(longLived(['websocket', 'tcp'], 120))) as Record<string, any>;
  assert.equal(f.apiVersion, 'networking.istio.io/v1alpha3');
  assert.deepEqual(f.metadata, {
    name: 'igw-public-gracegate',
    namespace: 'istio-ingress',
    labels: { app: 'igw-public', istio: 'igw-public', 'app.kubernetes.io/managed-by': 'gracegate' },
  });
  assert.deepEqual(f.spec.workloadSelector, { labels: { app: 'igw-public', istio: 'igw-public' } });
  const [hcm, tcp] = f.spec.configPatches;
  assert.deepEqual(hcm.match, { context: 'GATEWAY', listener: { filterChain: { filter: { name: 'envoy.filters.network.http_connection_manager' } } } });
  assert.equal(hcm.patch.operation, 'MERGE');
  assert.deepEqual(
    hcm.patch.value.typed_config.common_http_protocol_options,
    { max_connection_duration: '108s', max_stream_duration: '120s' },
    '120 - max(1, ceil(12)) = 108',
  );
  assert.equal(tcp.match.listener.filterChain.filter.name, 'envoy.filters.network.tcp_proxy');
  assert.equal(tcp.patch.value.typed_config.max_downstream_connection_duration, '120s');
});

test('no EnvoyFilter without a lifetime bound or without longLived; no TCP patch without tcp', () => {
  assert.equal(streamLimitsObject(changesOf(undefined)), null);
  assert.equal(streamLimitsObject(changesOf(longLived(['websocket']))), null);
  assert.ok(!extraObjects(changesOf(longLived(['websocket']))).some(isFilter));
  const f = streamLimitsObject(changesOf(longLived(['sse'], 60))) as Record<string, any>;
  assert.equal(f.spec.configPatches.length, 1);
});

test("synth's manifests.yaml carries it with each limit's reason beside it; the plan text names it", () => {
  const changes = changesOf(longLived(['grpc-stream', 'tcp'], 60));
  const text = manifestsYaml(changes);
  assert.match(
    text,
    /# maxStreamLifetimeSeconds - max\(1, ceil\(0\.1 x maxStreamLifetimeSeconds\)\): HTTP\/2 and gRPC clients get GOAWAY[^\n]*\n\s+max_connection_duration: 54s/,
  );
  assert.match(text, /# maxStreamLifetimeSeconds: every HTTP stream[^\n]*\n\s+max_stream_duration: 60s/);
  assert.match(text, /# maxStreamLifetimeSeconds: a TCP connection is closed \(FIN\)[^\n]*\n\s+max_downstream_connection_duration: 60s/);
  assert.deepEqual(docs(text).filter(isFilter), [streamLimitsObject(changes)]);
  const plan = renderPlanText(planGateway(spec(longLived(['grpc-stream', 'tcp'], 60))), { width: 400 });
  assert.match(plan, /^long-lived Kinds: grpc-stream, tcp; clients reconnect and resume\.$/m);
  assert.match(plan, /Envoy limits \(EnvoyFilter istio-ingress\/igw-public-gracegate, beside the pod on every delivery path\): max_connection_duration 54s = /);
  assert.match(plan, /The drain waits up to 62s = maxStreamLifetimeSeconds \+ ceil\(2 x pollInterval\) for streams to rotate/);
});

test('post-render appends it, the Kustomize component lists it, the constructs synthesise it: the same object', () => {
  const changes = changesOf(longLived(['websocket'], 60), { chart: { kind: 'istio-gateway', version: '1.27.9' } });
  const want = streamLimitsObject(changes);
  const rendered = readFileSync(join(REPO_ROOT, 'test/delivery/post-render/fixtures/rendered-1.26-like.yaml'), 'utf8');
  assert.deepEqual(docs(postRender(rendered, changes, { target: TargetRule.name('igw-public') })).filter(isFilter), [want]);
  assert.deepEqual(docs(kustomizeComponent(changes)['objects.yaml']!).filter(isFilter), [want]);
  const chart = testChart();
  const gw = new GracefulGateway(chart, 'gw', { spec: spec(longLived(['websocket'], 60)) });
  const synthesised = (Testing.synth(chart) as Array<Record<string, any>>).filter(isFilter);
  assert.equal(synthesised.length, 1);
  assert.deepEqual(synthesised[0]!.spec, (streamLimitsObject(gw.changes) as Record<string, any>).spec);
  assert.ok(gw.streamLimits);
});

test("Gateway API: one EnvoyFilter per Gateway, selecting the pods istiod labels with the Gateway's name", () => {
  const changes = changesOf(longLived(['websocket'], 60), { chart: { kind: 'gateway-api', version: '1.27.9', gatewayClassName: 'istio' } });
  const filters = gatewayApiManifestObjects(changes).filter(isFilter) as Array<Record<string, any>>;
  assert.equal(filters.length, 1);
  assert.deepEqual(filters[0]!.spec.workloadSelector, { labels: { 'gateway.networking.k8s.io/gateway-name': 'igw-public' } });
});

/**
 * The comparison the cluster's delivery-paths test holds live objects to (test/proof/cluster/delivery/
 * live-fields.ts), on objects of its own: a dropped field, a rewritten value, a container or volume
 * gone and a list changed are each named by path; what the server or the injector adds beside the
 * planned fields is not a difference.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { differences, expectedPod, leafCount, podDifferences } from '../proof/cluster/delivery/live-fields';
import { planGateway } from '../../src/plan/plan-gateway';
import { podChanges } from '../../src/pod/pod-changes';
import { resolveGatewaySpec } from '../../src/schema/parse-spec';
import { parse as parseYaml } from 'yaml';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';

const changes = podChanges(planGateway(resolveGatewaySpec(parseYaml(readFileSync(join(REPO_ROOT, 'examples/haproxy.yaml'), 'utf8')), 'haproxy.yaml')));

/** A live pod as the API server and the injector would leave a faithful one: every planned field, plus defaults and the proxy's own. */
function faithfulPod(): any {
  const want = structuredClone(expectedPod(changes)) as any;
  const containers = want.spec.containers.map((c: any) =>
    c.name === 'istio-proxy'
      ? { ...c, image: 'proxyv2', args: ['proxy', 'router'], readinessProbe: { httpGet: { path: '/healthz/ready', port: 15021 } } }
      : { ...c, terminationMessagePath: '/dev/termination-log' },
  );
  return {
    metadata: {
      name: 'igw-public-abc',
      labels: { ...want.metadata.labels, 'pod-template-hash': 'abc' },
      annotations: { ...want.metadata.annotations, 'istio.io/rev': 'default' },
    },
    spec: { ...want.spec, containers, dnsPolicy: 'ClusterFirst', volumes: [...want.spec.volumes, { name: 'istio-envoy', emptyDir: {} }] },
  };
}

test('a faithful live pod (defaults and injected fields beside the planned ones) has no difference', () => {
  assert.deepEqual(podDifferences(changes, faithfulPod()), []);
  assert.ok(leafCount(expectedPod(changes)) > 40, 'the comparison covers the hc container, the hold, volumes, grace period, affinity, annotations');
});

test('a dropped field, a rewritten value, a missing container and a changed list are each named by path', () => {
  const pod = faithfulPod();
  delete pod.spec.containers.find((c: any) => c.name === 'istio-proxy').lifecycle;
  pod.spec.terminationGracePeriodSeconds = 30;
  pod.spec.volumes = pod.spec.volumes.filter((v: any) => v.name !== 'gracegate-state');
  const hc = pod.spec.containers.find((c: any) => c.name === 'gracegate-hc');
  hc.readinessProbe.httpGet.port = 15020;
  hc.command = ['gracegate', 'hc'];
  pod.metadata.annotations['sidecar.istio.io/rewriteAppHTTPProbers'] = 'true';
  const paths = podDifferences(changes, pod).map((d) => d.path);
  assert.deepEqual(
    paths.sort(),
    [
      'Pod/igw-public-abc.metadata.annotations.sidecar.istio.io/rewriteAppHTTPProbers',
      'Pod/igw-public-abc.spec.containers[gracegate-hc].command',
      'Pod/igw-public-abc.spec.containers[gracegate-hc].readinessProbe.httpGet.port',
      'Pod/igw-public-abc.spec.containers[istio-proxy].lifecycle',
      'Pod/igw-public-abc.spec.terminationGracePeriodSeconds',
      'Pod/igw-public-abc.spec.volumes[gracegate-state]',
    ].sort(),
  );
});

test('differences: scalars exactly, lists of named entries by name, other lists whole', () => {
  assert.deepEqual(differences({ a: '10m' }, { a: '0.01' }, 'x'), [{ path: 'x.a', expected: '10m', live: '0.01' }]);
  assert.deepEqual(differences([{ name: 'a', v: 1 }], [{ name: 'b' }, { name: 'a', v: 1, w: 2 }], 'x'), []);
  assert.equal(differences(['ALL'], ['ALL', 'NET_RAW'], 'x').length, 1);
  assert.equal(differences({ a: 1 }, undefined, 'x').length, 1);
});

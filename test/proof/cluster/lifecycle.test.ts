/**
 * The cluster's own interface (npm run cluster): status --json, a second `up` that changes nothing,
 * `exec` in the outside namespace, the default gateway `up` installs (examples/haproxy.yaml through
 * synth, with the real chart), and the host's namespace keeping nothing of the cluster while it runs.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { REPO_ROOT } from '../../support/repo';
import { kubectlJson } from './kubectl';
import { KUBECONFIG, NODES } from './layout';
import { leftovers } from './leftovers';
import { requireCluster } from './require-cluster';

const MAIN = join(REPO_ROOT, 'dist/test/proof/cluster/main.js');
const cluster = (...args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', timeout: 300_000 });

before(() => requireCluster());

test('status --json names the kubeconfig and the nodes, and says ready', () => {
  const r = cluster('status', '--json');
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { kubeconfig: KUBECONFIG, nodes: NODES.map((n) => ({ name: n.name, ip: n.ip })), ready: true });
});

test("exec runs in the outside namespace with KUBECONFIG and the tools on PATH; the node addresses are not the host's", () => {
  const r = cluster('exec', 'kubectl', 'get', 'nodes', '-o', 'name');
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(
    r.stdout.trim().split('\n').sort(),
    NODES.map((n) => `node/${n.name}`),
  );
  const hostAddresses = spawnSync('ip', ['-o', 'addr', 'show'], { encoding: 'utf8' }).stdout;
  for (const n of NODES) assert.ok(!hostAddresses.includes(` ${n.ip}/`), `${n.ip} is not an address of the host's namespace`);
});

test("while the cluster runs, the host's namespace has no cluster interface, private-address listener or KUBE iptables rule", () => {
  // leftovers() lists the host-side traces among others; with the cluster up only those must be absent.
  const hostSide = leftovers().filter((l) => /^host /.test(l));
  assert.deepEqual(hostSide, []);
});

test('up (not bare) on a running cluster installs the gateway planned from examples/haproxy.yaml: the hc sidecar, the proxy hold, probes of its own; a second up changes nothing', () => {
  const first = cluster('up');
  assert.equal(first.status, 0, first.stderr);
  const pods = kubectlJson<{
    items: Array<{
      spec: {
        containers: Array<{
          name: string;
          readinessProbe?: { httpGet?: { port: unknown; path: string } };
          lifecycle?: { preStop?: { httpGet?: { path: string } } };
        }>;
      };
    }>;
  }>(['-n', 'istio-ingress', 'get', 'pods', '-l', 'istio=igw-public']);
  assert.equal(pods.items.length, 2, 'examples/haproxy.yaml plans 2 replicas');
  for (const p of pods.items) {
    const hc = p.spec.containers.find((c) => c.name === 'gracegate-hc');
    const proxy = p.spec.containers.find((c) => c.name === 'istio-proxy');
    assert.ok(hc && proxy, 'the hc sidecar beside istio-proxy');
    assert.equal(proxy!.lifecycle?.preStop?.httpGet?.path, '/wait-closed', 'the proxy hold');
    assert.equal(hc!.lifecycle?.preStop?.httpGet?.path, '/hc-stopping');
    assert.deepEqual(
      [hc!.readinessProbe?.httpGet?.path, hc!.readinessProbe?.httpGet?.port],
      ['/health', 'hc-health'],
      "istiod left the hc's readiness probe alone",
    );
  }
  const started = Date.now();
  const second = cluster('up');
  assert.equal(second.status, 0, second.stderr);
  assert.match(second.stderr, /already up/);
  assert.ok(Date.now() - started < 30_000, 'a second up builds and installs nothing');
});

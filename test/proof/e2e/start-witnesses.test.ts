/**
 * The start half's witnesses read kube-proxy's rules and HAProxy's log (test/proof/cluster/
 * start-witnesses.ts, arrivals.ts): what they parse, in kube-proxy's own formats (pkg/proxy/
 * iptables/proxier.go, Kubernetes 1.34), and how a failed request is given a half and a cause.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RequestRecord } from '../../../src/verify/load';
import { assignFailures, causeOf, type ArrivalTimeline } from '../cluster/arrivals';
import { nodePortAt, parseDroppedPorts, parseEndpointRules } from '../cluster/start-witnesses';
import type { RequestLogLine } from '../harness/haproxy';

const SAVE = [
  '*filter',
  '-A KUBE-EXTERNAL-SERVICES -m comment --comment "gg-a/igw:http2 has no local endpoints" -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 31234 -j DROP',
  '-A KUBE-EXTERNAL-SERVICES -m comment --comment "gg-b/igw:http2 has no local endpoints" -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 31235 -j DROP',
  'COMMIT',
  '*nat',
  '-A KUBE-SVC-CUXJIEYRPR6VJZ2J -m comment --comment "gg-a/igw:http2 -> 10.244.1.4:80" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-GKZ5MWQLHLZ6KQBV',
  '-A KUBE-SVC-CUXJIEYRPR6VJZ2J -m comment --comment "gg-a/igw:http2 -> 10.244.2.3:80" -j KUBE-SEP-Y57HZS3UDLPPZZ2M',
  '-A KUBE-SVL-7DSU5NIWM66HRDNA -m comment --comment "gg-a/igw-gracegate-health:hc-health -> 10.244.2.3:18180" -j KUBE-SEP-ODNBWPDSD5R5AQTE',
  '-A KUBE-SEP-ODNBWPDSD5R5AQTE -p tcp -m comment --comment "gg-a/igw-gracegate-health:hc-health" -m tcp -j DNAT --to-destination 10.244.2.3:18180',
  'COMMIT',
].join('\n');

test("kube-proxy's endpoint rules: each Service port's chain, its policy and the pods it leads to, one namespace's", () => {
  assert.deepEqual(parseEndpointRules(SAVE, 'gg-a'), [
    { service: 'igw', port: 'http2', address: '10.244.1.4', policy: 'Cluster' },
    { service: 'igw', port: 'http2', address: '10.244.2.3', policy: 'Cluster' },
    { service: 'igw-gracegate-health', port: 'hc-health', address: '10.244.2.3', policy: 'Local' },
  ]);
  assert.deepEqual(parseEndpointRules(SAVE, 'gg-b'), []);
});

test('the NodePorts a node drops for want of a local endpoint (externalTrafficPolicy Local)', () => {
  assert.deepEqual(parseDroppedPorts(SAVE, 'gg-a'), [{ service: 'igw', port: 'http2' }]);
  assert.deepEqual(parseDroppedPorts(SAVE, 'gg-c'), []);
});

test("HAProxy's termination states in words: a dropped SYN, a refused connect, a flush, the client's side", () => {
  assert.match(causeOf('sC--', 503), /connect to the node timed out: the node dropped the SYN/);
  assert.match(causeOf('SC--', 503), /refused/);
  assert.match(causeOf('KD--', -1), /killed/);
  assert.match(causeOf(null, null), /HAProxy logged no request/);
});

const T0 = 1_000_000;
const record = (startMs: number, endMs: number, clientPort: number, outcome: RequestRecord['outcome']): RequestRecord => ({
  spec: { kind: 'slow', ms: 50 },
  startMs: T0 + startMs,
  endMs: T0 + endMs,
  outcome,
  worker: 0,
  clientPort,
  reusedConnection: true,
});
const line = (startMs: number, clientPort: number, server: string, terminationState: string, status: number): RequestLogLine => ({
  atMs: T0 + startMs,
  text: '',
  clientPort,
  server,
  status,
  terminationState,
  startMs: T0 + startMs,
  endMs: T0 + startMs + 1000,
});

test('a failure is the termination half where its node had a pod leaving, the start half where its node had only a new one', () => {
  const arrival = { node: 'node-2', createdMs: 500 } as ArrivalTimeline;
  const leaving = [{ pod: 'old', node: 'node-1', fromMs: T0 + 100, toMs: T0 + 3000 }];
  const failures = assignFailures(
    [
      record(1000, 2001, 1, 'ECONNRESET'),
      record(1200, 1201, 2, 'ECONNRESET'),
      record(1300, 1400, 3, 'http-503'),
      record(50, 60, 4, 'ok'),
      record(2500, 2519, 5, 'ECONNRESET'),
    ],
    [line(1000, 1, 'gw-2', 'sC--', 503), line(1300, 3, 'gw-1', 'SC--', 503), { ...line(1450, 5, 'gw-1', '----', 200), endMs: T0 + 2480 }],
    T0,
    leaving,
    [arrival],
  );
  assert.deepEqual(
    failures.map((f) => [f.startMs, f.server, f.half]),
    [
      [1000, 'gw-2', 'start'],
      [1200, null, 'before-the-lb'],
      [1300, 'gw-1', 'termination'],
      // HAProxy read nothing of it, and the request before it on its connection ended on node-1, leaving.
      [2500, 'gw-1', 'termination'],
    ],
  );
});

test("a node's NodePort at a moment: its rules' last sample by then, dropped, leading to the new pod, or to one still leaving", () => {
  const sample = (atMs: number, addresses: string[], dropped: boolean, node = 'node-1') => ({
    atMs,
    savedAtMs: atMs + 20,
    node,
    endpoints: addresses.map((address) => ({ service: 'igw', port: 'http2', address, policy: 'Local' as const })),
    dropped: dropped ? [{ service: 'igw', port: 'http2' }] : [],
  });
  const samples = [sample(100, ['10.244.1.4'], false), sample(200, [], true), sample(300, ['10.244.1.9'], false), sample(250, [], true, 'node-2')];
  assert.deepEqual(nodePortAt(samples, 'node-1', 'igw', 50), { kind: 'unknown' });
  assert.deepEqual(nodePortAt(samples, 'node-1', 'igw', 150), { kind: 'leads', addresses: ['10.244.1.4'] });
  assert.deepEqual(nodePortAt(samples, 'node-1', 'igw', 299), { kind: 'dropped' });
  assert.deepEqual(nodePortAt(samples, 'node-1', 'igw', 300), { kind: 'leads', addresses: ['10.244.1.9'] });
  // Another Service's endpoints, or a Cluster chain, do not lead this NodePort anywhere.
  assert.deepEqual(nodePortAt(samples, 'node-1', 'igw-health', 300), { kind: 'dropped' });
  assert.deepEqual(nodePortAt(samples, 'node-1', 'igw', 300, 'Cluster'), { kind: 'dropped' });
});

/** The kubelet sources of the witness port (src/hc/witness-sources.ts), from the pod's own files. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HOST_IPS_ENV } from '../../src/contract/addresses';
import { defaultGateways, plainAddress, podWitnessSources, ROUTE_FILES, witnessSources } from '../../src/hc/witness-sources';

// A pod on the bridge CNI (its gateway is the node's cni0 address, 10.244.1.1) and an IPv6 default route.
const ROUTE = `Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t0101F40A\t0003\t0\t0\t0\t00000000\t0\t0\t0
eth0\t0001F40A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
`;
const ROUTE6 = `fe800000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0
00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000002 00000000 00000003     eth0
`;

test("the default gateways of /proc/net/route and /proc/net/ipv6_route: the bridge's address", () => {
  assert.deepEqual(defaultGateways(ROUTE, ROUTE6), ['10.244.1.1', 'fd00:0000:0000:0000:0000:0000:0000:0001']);
  assert.deepEqual(defaultGateways('', ''), [], 'no routes (not Linux): none');
});

test('an IPv4 caller of a dual-stack listener (::ffff:a.b.c.d) is the IPv4 address', () => {
  assert.equal(plainAddress('::ffff:10.244.1.1'), '10.244.1.1');
  assert.equal(plainAddress('fd00::1'), 'fd00::1');
});

test("loopback, the node's addresses, the gateway and allowFrom are served; nothing else is", () => {
  const files: Record<string, string> = { [ROUTE_FILES.v4]: ROUTE, [ROUTE_FILES.v6]: ROUTE6 };
  const s = podWitnessSources(['192.168.50.0/24'], { [HOST_IPS_ENV]: '172.18.0.3,fd01::3' }, (f) => files[f] ?? '');
  for (const ok of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '172.18.0.3', 'fd01::3', '10.244.1.1', '::ffff:10.244.1.1', 'fd00::1', '192.168.50.7']) {
    assert.equal(s.allows(ok), true, ok);
  }
  for (const no of ['10.244.1.7', '127.0.0.2', '172.18.0.4', '', 'not-an-ip', '192.168.51.1']) assert.equal(s.allows(no), false, no);
  assert.ok(s.described.includes("10.244.1.1 (the pod's default gateway)"), s.described.join('; '));
});

test('without the downward API and routes only loopback is served: the NetworkPolicy then decides who reaches the port', () => {
  const s = witnessSources({ hostIps: [], gateways: [], allowFrom: [] });
  assert.deepEqual(s.described, ['127.0.0.1 (loopback)', '::1 (loopback)']);
});

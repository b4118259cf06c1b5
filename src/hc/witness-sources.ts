/**
 * Who may call the witness port: the addresses a kubelet's httpGet hook can come from. The kubelet
 * sends a hook to the pod IP from the node, and the address the pod sees depends on the CNI:
 *
 * - the node's own addresses (the downward API's `status.hostIPs`, passed by the pod changes as
 *   GRACEGATE_HOST_IPS): a routed CNI (Calico, the AWS VPC CNI) sends the node's traffic from them;
 * - the pod's default gateway (read from /proc/net/route and /proc/net/ipv6_route): the bridge CNI
 *   and Cilium send the node's traffic from the bridge's or `cilium_host`'s address, which is the
 *   gateway of every pod on the node (measured on the test cluster: docs/cluster.md);
 * - loopback: the pod itself, which can reach the control port anyway;
 * - whatever `terminationWitness.allowFrom` adds, for a CNI whose node traffic comes from none of
 *   these (then the NetworkPolicy, which always lets the node in, is what keeps others out).
 *
 * Every other caller is answered 403 and never counted as a witness (docs/hc.md, "Where the
 * witness may come from").
 */
import * as fs from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { addressOrBlockProblem, HOST_IPS_ENV } from '../contract/addresses';

export const ROUTE_FILES = { v4: '/proc/net/route', v6: '/proc/net/ipv6_route' } as const;

const LOOPBACK = ['127.0.0.1', '::1'] as const;

export interface WitnessSources {
  allows(address: string): boolean;
  /** What is allowed and where each came from, for the start-up log and /state. */
  readonly described: readonly string[];
}

/** `::ffff:10.0.0.1` (an IPv4 caller of a dual-stack listener) as `10.0.0.1`. */
export function plainAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

function add(list: BlockList, text: string): void {
  const [address, prefix] = text.split('/');
  const family = isIP(address!) === 4 ? 'ipv4' : 'ipv6';
  if (prefix === undefined) list.addAddress(address!, family);
  else list.addSubnet(address!, Number(prefix), family);
}

/** The default routes' gateways in /proc/net/route (IPv4, little-endian hex) and /proc/net/ipv6_route. */
export function defaultGateways(route4: string, route6: string): string[] {
  const found: string[] = [];
  for (const line of route4.split('\n').slice(1)) {
    const [, destination, gateway, flags, , , , mask] = line.trim().split(/\s+/);
    // RTF_GATEWAY (0x2): the route goes through a gateway.
    if (destination !== '00000000' || mask !== '00000000' || !gateway || !(Number.parseInt(flags ?? '0', 16) & 0x2)) continue;
    const n = Number.parseInt(gateway, 16);
    if (!Number.isFinite(n) || n === 0) continue;
    found.push([n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff].join('.'));
  }
  for (const line of route6.split('\n')) {
    const [destination, prefix, , , nextHop] = line.trim().split(/\s+/);
    if (destination !== '0'.repeat(32) || prefix !== '00' || !nextHop || /^0+$/.test(nextHop) || nextHop.length !== 32) continue;
    // Eight groups of four hex digits, uncompressed: a valid IPv6 address as it stands.
    found.push(nextHop.match(/.{4}/g)!.join(':'));
  }
  return [...new Set(found)];
}

export function witnessSources(input: { hostIps: readonly string[]; gateways: readonly string[]; allowFrom: readonly string[] }): WitnessSources {
  const list = new BlockList();
  const described: string[] = [];
  const take = (texts: readonly string[], from: string) => {
    for (const text of texts) {
      if (addressOrBlockProblem(text) !== null) continue;
      add(list, text);
      described.push(`${text} (${from})`);
    }
  };
  take(LOOPBACK, 'loopback');
  take(input.hostIps, `the node: ${HOST_IPS_ENV}`);
  take(input.gateways, "the pod's default gateway");
  take(input.allowFrom, 'terminationWitness.allowFrom');
  return {
    described,
    allows(address) {
      const plain = plainAddress(address);
      const family = isIP(plain);
      return family !== 0 && list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

function readOrEmpty(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').slice(0, 64 * 1024);
  } catch {
    return '';
  }
}

/** The sources of this pod: GRACEGATE_HOST_IPS (comma- or space-separated), its routes, `allowFrom`. */
export function podWitnessSources(allowFrom: readonly string[], env: NodeJS.ProcessEnv = process.env, read = readOrEmpty): WitnessSources {
  const hostIps = (env[HOST_IPS_ENV] ?? '').split(/[\s,]+/).filter((a) => a !== '');
  return witnessSources({ hostIps, gateways: defaultGateways(read(ROUTE_FILES.v4), read(ROUTE_FILES.v6)), allowFrom });
}

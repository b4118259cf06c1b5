/**
 * The cluster's network: one namespace a node and one for the outside, a bridge in the outside
 * namespace that every node's eth0 joins (the nodes' L2 segment), and routes to each node's pod
 * range as a flat network has them. Both ends of every veth are created inside namespaces, so the
 * host's own namespace never holds a cluster address or interface.
 */
import { readdirSync } from 'node:fs';
import { CLUSTER_ID, NODE_NET, NODES, OUTSIDE, NETNS_NAMES } from './layout';
import { run, runIn } from './sh';

const ip = (args: string[]): string => run('ip', args);

export function netnsList(): string[] {
  return run('ip', ['netns', 'list'])
    .split('\n')
    .map((l) => l.split(' ')[0]!)
    .filter((n) => n !== '');
}

export function networkUp(): void {
  const existing = new Set(netnsList());
  for (const ns of NETNS_NAMES) if (!existing.has(ns)) ip(['netns', 'add', ns]);
  const out = OUTSIDE.netns;
  ip(['-n', out, 'link', 'set', 'lo', 'up']);
  ip(['-n', out, 'link', 'add', OUTSIDE.bridge, 'type', 'bridge']);
  ip(['-n', out, 'addr', 'add', `${OUTSIDE.ip}/${NODE_NET.prefix}`, 'dev', OUTSIDE.bridge]);
  ip(['-n', out, 'link', 'set', OUTSIDE.bridge, 'up']);
  NODES.forEach((node, i) => {
    const port = `node${i + 1}`;
    ip(['link', 'add', port, 'netns', out, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', node.netns]);
    ip(['-n', out, 'link', 'set', port, 'master', OUTSIDE.bridge, 'up']);
    ip(['-n', node.netns, 'link', 'set', 'lo', 'up']);
    ip(['-n', node.netns, 'addr', 'add', `${node.ip}/${NODE_NET.prefix}`, 'dev', 'eth0']);
    ip(['-n', node.netns, 'link', 'set', 'eth0', 'up']);
    ip(['-n', node.netns, 'route', 'add', 'default', 'via', OUTSIDE.ip]);
    // A node routes its pods and forwards between them, kube-proxy's NAT and the other nodes.
    // Bridged pod-to-pod traffic passes iptables, so kube-proxy's NAT works between pods of one node.
    for (const key of ['net.ipv4.ip_forward=1', 'net.bridge.bridge-nf-call-iptables=1', 'net.ipv4.conf.all.rp_filter=0']) {
      runIn(node.netns, 'sysctl', ['-q', '-w', key]);
    }
  });
  for (const node of NODES) {
    for (const other of NODES) {
      if (other === node) continue;
      ip(['-n', node.netns, 'route', 'add', other.podCidr, 'via', other.ip]);
    }
    ip(['-n', out, 'route', 'add', node.podCidr, 'via', node.ip]);
  }
}

/** Deletes the cluster's namespaces (their interfaces go with them) and containerd's pod ones. */
export function networkDown(): void {
  const present = new Set(netnsList());
  for (const ns of [...NETNS_NAMES, ...podNetnsNames()]) {
    if (present.has(ns)) run('ip', ['netns', 'delete', ns], { allowFailure: true });
  }
}

/**
 * The pod sandboxes' namespaces containerd's CNI made (`cni-<uuid>` under /run/netns; containerd
 * 1.6 cannot put them elsewhere). Their names do not say which cluster made them: while another
 * instance runs on the machine (GRACEGATE_CLUSTER_ID), none are counted as this one's.
 */
export function podNetnsNames(): string[] {
  let others: string[] = [];
  try {
    others = readdirSync('/run/gracegate').filter((d) => d !== CLUSTER_ID);
  } catch {
    // no instance has a runtime folder
  }
  if (others.length > 0) return [];
  try {
    return readdirSync('/run/netns').filter((n) => n.startsWith('cni-'));
  } catch {
    return [];
  }
}

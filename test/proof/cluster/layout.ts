/**
 * The test cluster's shape, as data: its network namespaces and addresses, its folders, its
 * versions. Every address here exists only inside network namespaces the cluster creates (one a
 * node, and `outside` for the external LB and the clients); the host's own namespace gets none.
 */
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/repo';

export const KUBERNETES_VERSION = 'v1.34.4';
export const ISTIO_VERSION = '1.31-dev';
/** The Istio source the cluster builds: release-1.31 as served by the Go module proxy. */
export const ISTIO_MODULE_VERSION = 'v0.0.0-20260827124520-eed52ebb66ad';
/** The Envoy in the cluster's proxy image (test/support/envoy-versions.json's Istio one). */
export const PROXY_ENVOY_VERSION = '1.36.4';
/** Every Envoy a proxy image is built for (the cluster can run either). */
export const PROXY_ENVOY_VERSIONS = ['1.36.4', '1.40.0'] as const;

/** Image references in the nodes' containerd. `.invalid` never resolves: nothing is pulled. */
export const HUB = 'gracegate.invalid/istio';
export const IMAGE_TAG = '1.31-dev';
export const proxyImage = (envoyVersion: string = PROXY_ENVOY_VERSION): string => `${HUB}/proxyv2:${IMAGE_TAG}-envoy-${envoyVersion}`;
export const IMAGES = {
  pause: `${HUB}/pause:${IMAGE_TAG}`,
  pilot: `${HUB}/pilot:${IMAGE_TAG}`,
  coredns: `${HUB}/coredns:${IMAGE_TAG}`,
  testapp: `${HUB}/testapp:${IMAGE_TAG}`,
} as const;

export type NodeLayout = {
  /** The Node's name in Kubernetes. */
  readonly name: string;
  /** Its network namespace (`ip netns` name). */
  readonly netns: string;
  readonly ip: string;
  /** The pods' range on this node (host-local IPAM), routed to `ip` from everywhere else. */
  readonly podCidr: string;
  /** The first address of podCidr: the node's own address on its pods' bridge. */
  readonly podGateway: string;
  /** The kubelet's cgroup root (cgroupfs driver): one subtree a node. */
  readonly cgroupRoot: string;
};

/**
 * The cluster instance: its namespaces, runtime folder and cgroups are named after it, so that two
 * clones (or two engineers' worktrees) can each run a cluster on one machine. Addresses repeat
 * between instances harmlessly: each instance's exist only inside its own namespaces.
 */
export const CLUSTER_ID = (() => {
  const id = process.env.GRACEGATE_CLUSTER_ID ?? 'gg';
  if (!/^[a-z][a-z0-9]{0,5}$/.test(id)) throw new Error(`GRACEGATE_CLUSTER_ID must be 1-6 lower-case letters or digits, starting with a letter (got '${id}')`);
  return id;
})();

export const NODE_COUNT = 3;
/** The network between the nodes and the outside: a bridge in the outside namespace. */
export const NODE_NET = { cidr: '10.90.0.0/24', prefix: 24, outsideIp: '10.90.0.1' } as const;
export const SERVICE_CIDR = '10.96.0.0/16';
/**
 * The NodePorts the tests choose, each a base for consecutive ports. The API server hands out
 * NodePorts of its own choosing (every LoadBalancer gateway Service takes three) from the upper part
 * of --service-node-port-range first, keeping the lowest 86 ports (30000-30085 for the default
 * range: size / 32) for ports a Service names itself (ServiceNodePortStaticSubrange, GA in 1.29);
 * chosen ports above that band were once taken by a random allocation first ("provided port is
 * already allocated").
 */
export const STATIC_NODE_PORTS = {
  sessions: 30010,
  /** start-half.ts: the start half of a rollout (issue 50). */
  startHalf: 30020,
  probeLoad: 30030,
  longDrain: 30035,
  finalScrape: 30040,
  netpol: 30045,
  deliveryPaths: 30050,
  argocd: 30060,
  exampleChart: 30080,
  /** The ApplicationSet's example repository names these two itself (plugins/argocd/applicationset/example-repo). */
  applicationSet: 30070,
} as const;
export const KUBERNETES_SERVICE_IP = '10.96.0.1';
export const DNS_SERVICE_IP = '10.96.0.10';
export const POD_CIDR = '10.244.0.0/16';
export const CLUSTER_DOMAIN = 'cluster.local';

export const NODES: readonly NodeLayout[] = Array.from({ length: NODE_COUNT }, (_, i) => ({
  name: `node-${i + 1}`,
  netns: `${CLUSTER_ID}-node-${i + 1}`,
  ip: `10.90.0.${11 + i}`,
  podCidr: `10.244.${i + 1}.0/24`,
  podGateway: `10.244.${i + 1}.1`,
  cgroupRoot: `/gracegate-${CLUSTER_ID}-node-${i + 1}`,
}));

/** The external side: the LB (HAProxy) and the clients run here and reach only the node addresses. */
export const OUTSIDE = { netns: `${CLUSTER_ID}-outside`, bridge: 'nodes', ip: NODE_NET.outsideIp } as const;
/** The control plane runs in the first node's namespace, on its address. */
export const CONTROL_PLANE = { node: NODES[0]!, apiPort: 6443, etcdClientUrl: 'http://127.0.0.1:2379' } as const;
export const apiServerUrl = (): string => `https://${CONTROL_PLANE.node.ip}:${CONTROL_PLANE.apiPort}`;

/** Every namespace the cluster creates; `down` removes them and any `cni-*` one containerd made. */
export const NETNS_NAMES = [OUTSIDE.netns, ...NODES.map((n) => n.netns)] as const;

/** The clone's state of a running cluster (kubeconfig, logs, pid files, configs). */
export const CLUSTER_DIR = join(REPO_ROOT, '.cache', 'cluster');
export const KUBECONFIG = join(CLUSTER_DIR, 'kubeconfig');
export const dirs = {
  pki: join(CLUSTER_DIR, 'pki'),
  logs: join(CLUSTER_DIR, 'logs'),
  pids: join(CLUSTER_DIR, 'pids'),
  etc: join(CLUSTER_DIR, 'etc'),
  etcd: join(CLUSTER_DIR, 'etcd'),
  /** Runtime state that holds mounts and sockets; short paths (unix socket names are bounded). */
  run: `/run/gracegate/${CLUSTER_ID}`,
  node: (n: NodeLayout) => ({
    etc: join(CLUSTER_DIR, 'etc', n.name),
    kubelet: join(CLUSTER_DIR, 'kubelet', n.name),
    /** containerd's state and socket: under /run, short enough for unix socket paths. */
    containerdState: join('/run/gracegate', CLUSTER_ID, n.name, 'containerd'),
    containerdSocket: join('/run/gracegate', CLUSTER_ID, n.name, 'containerd.sock'),
    runcRoot: join('/run/gracegate', CLUSTER_ID, n.name, 'runc'),
    cniConf: join(CLUSTER_DIR, 'etc', n.name, 'cni'),
    cniState: join('/run/gracegate', CLUSTER_ID, n.name, 'cni'),
  }),
} as const;

/** Tools every cluster command uses, from the test preparation (`.cache/tools`). */
export const TOOLS_PATH = [join(REPO_ROOT, '.cache/tools/v33/helm'), join(REPO_ROOT, '.cache/tools/v33/kubectl')];

/**
 * What each cluster process is started with: etcd, the API server, the controller manager and the
 * scheduler in the first node's namespace; on every node its own containerd (own socket, root and
 * state), kubelet (own root dir, cgroup root and resolv.conf), kube-proxy (iptables mode) and
 * kube-router's NetworkPolicy controller alone (the cluster's enforcing NetworkPolicy implementation).
 * Configuration files are written here; the daemons are started by cluster.ts.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CLUSTER_DOMAIN,
  CLUSTER_ID,
  CONTROL_PLANE,
  DNS_SERVICE_IP,
  IMAGES,
  KUBECONFIG,
  POD_CIDR,
  SERVICE_CIDR,
  apiServerUrl,
  dirs,
  type NodeLayout,
} from './layout';
import { pkiFile } from './pki';
import { inNetns, machineCache, type Daemon } from './sh';

/** A kubeconfig for one of pki.ts's identities. */
export function writeKubeconfig(file: string, identity: string): void {
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'gracegate', cluster: { server: apiServerUrl(), 'certificate-authority': pkiFile('ca.crt') } }],
    users: [{ name: identity, user: { 'client-certificate': pkiFile(`${identity}.crt`), 'client-key': pkiFile(`${identity}.key`) } }],
    contexts: [{ name: 'gracegate', context: { cluster: 'gracegate', user: identity } }],
    'current-context': 'gracegate',
  };
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`, { mode: 0o600 });
}

export const componentKubeconfig = (identity: string): string => join(dirs.etc, `${identity}.kubeconfig`);

export function writeControlPlaneConfig(): void {
  mkdirSync(dirs.etc, { recursive: true });
  writeKubeconfig(KUBECONFIG, 'admin');
  for (const id of ['controller-manager', 'scheduler', 'kube-proxy', 'kube-router']) writeKubeconfig(componentKubeconfig(id), id);
}

/**
 * What kube-router's NetworkPolicy controller reads (its own daemonset manifests' ClusterRole, cut to
 * the firewall): the pods, namespaces and policies it turns into iptables rules and ipsets, the
 * node's addresses, and the Services and endpoints its informers watch; bound to its user (pki.ts).
 */
export const KUBE_ROUTER_RBAC: unknown[] = [
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'gracegate:kube-router' },
    rules: [
      { apiGroups: [''], resources: ['namespaces', 'pods', 'services', 'nodes', 'endpoints'], verbs: ['list', 'get', 'watch'] },
      { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['list', 'get', 'watch'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'get', 'watch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    ],
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'gracegate:kube-router' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'gracegate:kube-router' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'gracegate:kube-router' }],
  },
];

/** kube-router's health port in each node's namespace (its default, 20244): GET /healthz answers once its controllers run. */
export const KUBE_ROUTER_HEALTH_PORT = 20244;

export function controlPlaneDaemons(bin: string): Daemon[] {
  const ns = CONTROL_PLANE.node.netns;
  const ip = CONTROL_PLANE.node.ip;
  return [
    {
      name: 'etcd',
      argv: inNetns(ns, join(bin, 'etcd'), [
        '--name=gracegate',
        `--data-dir=${dirs.etcd}`,
        `--listen-client-urls=${CONTROL_PLANE.etcdClientUrl}`,
        `--advertise-client-urls=${CONTROL_PLANE.etcdClientUrl}`,
        '--listen-peer-urls=http://127.0.0.1:2380',
        '--initial-advertise-peer-urls=http://127.0.0.1:2380',
        '--initial-cluster=gracegate=http://127.0.0.1:2380',
        '--listen-metrics-urls=http://127.0.0.1:2381',
        // A test cluster on a shared 2-core machine: fsync latency must not make etcd give up.
        '--unsafe-no-fsync',
        '--quota-backend-bytes=2147483648',
        '--log-level=warn',
      ]),
    },
    {
      name: 'kube-apiserver',
      argv: inNetns(ns, join(bin, 'kube-apiserver'), [
        `--etcd-servers=${CONTROL_PLANE.etcdClientUrl}`,
        `--bind-address=${ip}`,
        `--advertise-address=${ip}`,
        `--secure-port=${CONTROL_PLANE.apiPort}`,
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
        '--service-node-port-range=30000-32767',
        `--client-ca-file=${pkiFile('ca.crt')}`,
        `--tls-cert-file=${pkiFile('apiserver.crt')}`,
        `--tls-private-key-file=${pkiFile('apiserver.key')}`,
        `--kubelet-client-certificate=${pkiFile('apiserver-kubelet-client.crt')}`,
        `--kubelet-client-key=${pkiFile('apiserver-kubelet-client.key')}`,
        '--kubelet-preferred-address-types=InternalIP',
        `--service-account-issuer=https://kubernetes.default.svc.${CLUSTER_DOMAIN}`,
        `--service-account-key-file=${pkiFile('sa.pub')}`,
        `--service-account-signing-key-file=${pkiFile('sa.key')}`,
        '--authorization-mode=Node,RBAC',
        '--enable-admission-plugins=NodeRestriction',
        '--allow-privileged=true',
        '--profiling=false',
        '--event-ttl=1h',
        '--v=1',
      ]),
    },
    {
      name: 'kube-controller-manager',
      argv: inNetns(ns, join(bin, 'kube-controller-manager'), [
        `--kubeconfig=${componentKubeconfig('controller-manager')}`,
        `--authentication-kubeconfig=${componentKubeconfig('controller-manager')}`,
        `--authorization-kubeconfig=${componentKubeconfig('controller-manager')}`,
        '--bind-address=127.0.0.1',
        '--leader-elect=false',
        '--use-service-account-credentials=true',
        `--service-account-private-key-file=${pkiFile('sa.key')}`,
        `--root-ca-file=${pkiFile('ca.crt')}`,
        `--cluster-signing-cert-file=${pkiFile('ca.crt')}`,
        `--cluster-signing-key-file=${pkiFile('ca.key')}`,
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
        `--cluster-cidr=${POD_CIDR}`,
        '--allocate-node-cidrs=false',
        // The HPA reads no metrics here (no metrics server); a resync of 5 s makes a changed range act soon.
        '--horizontal-pod-autoscaler-sync-period=5s',
        '--v=1',
      ]),
    },
    {
      name: 'kube-scheduler',
      argv: inNetns(ns, join(bin, 'kube-scheduler'), [
        `--kubeconfig=${componentKubeconfig('scheduler')}`,
        `--authentication-kubeconfig=${componentKubeconfig('scheduler')}`,
        `--authorization-kubeconfig=${componentKubeconfig('scheduler')}`,
        '--bind-address=127.0.0.1',
        '--leader-elect=false',
        '--v=1',
      ]),
    },
  ];
}

/** containerd's own root (images and snapshots), kept between runs: a warm `up` imports nothing. */
export const containerdRoot = (node: NodeLayout): string => join(machineCache(), 'cluster', 'containerd', CLUSTER_ID, node.name);

export function writeNodeConfig(node: NodeLayout): void {
  const d = dirs.node(node);
  mkdirSync(d.etc, { recursive: true });
  mkdirSync(d.cniConf, { recursive: true });
  mkdirSync(d.kubelet, { recursive: true });
  writeFileSync(
    join(d.etc, 'containerd.toml'),
    [
      'version = 2',
      `root = "${containerdRoot(node)}"`,
      `state = "${d.containerdState}"`,
      'disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]',
      '[grpc]',
      `  address = "${d.containerdSocket}"`,
      '[ttrpc]',
      `  address = "${d.containerdSocket}.ttrpc"`,
      '[plugins."io.containerd.grpc.v1.cri"]',
      `  sandbox_image = "${IMAGES.pause}"`,
      // This VM lacks CAP_SYS_RESOURCE: without this every sandbox fails in runc.
      '  restrict_oom_score_adj = true',
      '  [plugins."io.containerd.grpc.v1.cri".containerd]',
      '    snapshotter = "overlayfs"',
      '    default_runtime_name = "runc"',
      '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
      '      runtime_type = "io.containerd.runc.v2"',
      '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
      '        SystemdCgroup = false',
      `        Root = "${d.runcRoot}"`,
      '  [plugins."io.containerd.grpc.v1.cri".cni]',
      '    bin_dir = "/usr/lib/cni"',
      `    conf_dir = "${d.cniConf}"`,
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(d.cniConf, '10-gracegate.conflist'),
    `${JSON.stringify(
      {
        cniVersion: '0.4.0',
        name: 'gracegate',
        plugins: [
          {
            type: 'bridge',
            bridge: 'cni0',
            isGateway: true,
            ipMasq: false,
            hairpinMode: true,
            ipam: { type: 'host-local', ranges: [[{ subnet: node.podCidr, gateway: node.podGateway }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: d.cniState },
          },
          { type: 'portmap', capabilities: { portMappings: true } },
        ],
      },
      null,
      2,
    )}\n`,
  );
  writeKubeconfig(join(d.etc, 'kubelet.kubeconfig'), `kubelet-${node.name}`);
  // The pods' resolver: the cluster's DNS only (they must not see the machine's).
  writeFileSync(join(d.etc, 'resolv.conf'), `nameserver ${DNS_SERVICE_IP}\n`);
  writeFileSync(
    join(d.etc, 'kubelet.yaml'),
    `${JSON.stringify(
      {
        apiVersion: 'kubelet.config.k8s.io/v1beta1',
        kind: 'KubeletConfiguration',
        address: node.ip,
        port: 10250,
        healthzBindAddress: '127.0.0.1',
        readOnlyPort: 0,
        authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: pkiFile('ca.crt') } },
        authorization: { mode: 'AlwaysAllow' },
        cgroupDriver: 'cgroupfs',
        cgroupRoot: node.cgroupRoot,
        failSwapOn: false,
        clusterDomain: CLUSTER_DOMAIN,
        clusterDNS: [DNS_SERVICE_IP],
        resolvConf: join(d.etc, 'resolv.conf'),
        containerRuntimeEndpoint: `unix://${d.containerdSocket}`,
        // Container logs with the node's other state, not in the machine's /var/log/pods.
        podLogsDir: join(d.kubelet, 'pod-logs'),
        // No disk or memory eviction on a shared build machine; no image GC (images are imported, not pulled).
        evictionHard: { 'memory.available': '1Mi', 'nodefs.available': '0%', 'imagefs.available': '0%', 'nodefs.inodesFree': '0%' },
        imageGCHighThresholdPercent: 100,
        imageGCLowThresholdPercent: 99,
        serializeImagePulls: false,
        // Status reported to the API server promptly, so a test sees a probe's effect within a second.
        nodeStatusUpdateFrequency: '4s',
        syncFrequency: '10s',
        fileCheckFrequency: '5s',
        maxPods: 50,
        podPidsLimit: -1,
        protectKernelDefaults: false,
        makeIPTablesUtilChains: true,
      },
      null,
      2,
    )}\n`,
  );
  writeFileSync(
    join(d.etc, 'kube-proxy.yaml'),
    `${JSON.stringify(
      {
        apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
        kind: 'KubeProxyConfiguration',
        clientConnection: { kubeconfig: componentKubeconfig('kube-proxy') },
        hostnameOverride: node.name,
        bindAddress: node.ip,
        healthzBindAddress: `${node.ip}:10256`,
        metricsBindAddress: '127.0.0.1:10249',
        mode: 'iptables',
        clusterCIDR: POD_CIDR,
        nodePortAddresses: [`${node.ip}/32`],
        // Leave the machine-wide conntrack table size alone (a node is a namespace, not a machine).
        conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
        // No iptables block: kube-proxy's own defaults (minSyncPeriod 1 s, syncPeriod 30 s;
        // pkg/proxy/apis/config/v1alpha1/defaults.go), as users run it. The start half of a rollout
        // depends on them (docs/cluster.md, "The start half of a rollout"); the lab once ran 0 s / 10 s.
      },
      null,
      2,
    )}\n`,
  );
}

/**
 * The kubelet's cgroup root, made in every mounted controller (cgroup v1: the kubelet refuses a
 * root missing from any of them); cpuset's cpus and mems copied from its parent, as v1 needs.
 */
export function makeCgroupRoot(node: NodeLayout): void {
  const base = '/sys/fs/cgroup';
  for (const controller of readdirSync(base)) {
    const parent = join(base, controller);
    if (!statSync(parent).isDirectory() || existsSync(join(parent, 'cgroup.procs')) === false) continue;
    const dir = join(parent, node.cgroupRoot);
    mkdirSync(dir, { recursive: true });
    if (controller === 'cpuset') {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(dir, f), readFileSync(join(parent, f), 'utf8'));
    }
  }
}

export function nodeDaemons(bin: string, node: NodeLayout): Daemon[] {
  const d = dirs.node(node);
  return [
    { name: `containerd-${node.name}`, argv: inNetns(node.netns, 'containerd', ['--config', join(d.etc, 'containerd.toml')]) },
    {
      name: `kubelet-${node.name}`,
      argv: inNetns(node.netns, join(bin, 'kubelet'), [
        `--config=${join(d.etc, 'kubelet.yaml')}`,
        `--kubeconfig=${join(d.etc, 'kubelet.kubeconfig')}`,
        // --v=3: the kubelet logs each preStop hook's start and end (its only record of them).
        `--root-dir=${d.kubelet}`,
        `--hostname-override=${node.name}`,
        `--node-ip=${node.ip}`,
        '--v=3',
      ]),
    },
    {
      name: `kube-proxy-${node.name}`,
      argv: inNetns(node.netns, join(bin, 'kube-proxy'), [`--config=${join(d.etc, 'kube-proxy.yaml')}`, '--v=1']),
    },
  ];
}

/**
 * kube-router's NetworkPolicy controller only: kube-proxy routes Services, the bridge CNI the pods.
 * Its rules and ipsets live in the node's namespace and go with it. Bridged pod-to-pod traffic
 * passes iptables (network.ts sets bridge-nf-call-iptables in every node namespace). Started once
 * the node is registered: it reads its Node object at start and exits without it.
 */
export function kubeRouterDaemon(kubeRouterBin: string, node: NodeLayout): Daemon {
  return {
    name: `kube-router-${node.name}`,
    argv: inNetns(node.netns, join(kubeRouterBin, 'kube-router'), [
      '--run-firewall',
      '--run-router=false',
      '--run-service-proxy=false',
      `--kubeconfig=${componentKubeconfig('kube-router')}`,
      `--hostname-override=${node.name}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--service-node-port-range=30000-32767',
      `--health-port=${KUBE_ROUTER_HEALTH_PORT}`,
      '--metrics-port=0',
      // A policy's change reaches the rules at once (informers); the full resync is its safety net.
      '--iptables-sync-period=30s',
      '--v=1',
    ]),
  };
}

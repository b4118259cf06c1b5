/**
 * The test cluster's life: `up` builds what is missing (scripts/cluster/build.sh, images.sh,
 * scripts/kube-router/build.sh, the sidecar image), makes the namespaces, starts the control plane and three nodes, imports the
 * images, and installs CoreDNS, Istio and (unless bare) a gateway; `down` stops everything and
 * removes every trace; `status` says what runs. Both are harmless when repeated.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/repo';
import { installCoreDns, installIstio, installDefaultGateway } from './addons';
import {
  KUBE_ROUTER_HEALTH_PORT,
  KUBE_ROUTER_RBAC,
  containerdRoot,
  kubeRouterDaemon,
  controlPlaneDaemons,
  makeCgroupRoot,
  nodeDaemons,
  writeControlPlaneConfig,
  writeNodeConfig,
} from './components';
import { clusterArchives, importImages, type ImageArchive } from './images';
import { kubectl, kubectlApply, kubectlJson } from './kubectl';
import { CLUSTER_DIR, CLUSTER_ID, KUBECONFIG, NODES, PROXY_ENVOY_VERSIONS, dirs } from './layout';
import { leftovers, sweep } from './leftovers';
import { networkUp, netnsList } from './network';
import { ensurePki } from './pki';
import { ClusterError, daemonLogTail, daemons, inNetns, sleep, startDaemon, stopDaemon, waitUntil } from './sh';

export type Built = { bin: string; images: string; kubeRouter: string };

const say = (text: string): void => {
  process.stderr.write(`cluster: ${text}\n`);
};

/** Runs a build script (its progress goes to stderr); its last stdout line is the output folder. */
function script(path: string, args: string[] = []): string {
  const res = spawnSync('bash', [join(REPO_ROOT, path), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 40 * 60_000 });
  if (res.status !== 0) throw new ClusterError(`${path} failed (exit ${res.status ?? res.signal})`);
  const lines = res.stdout.trim().split('\n');
  return lines[lines.length - 1]!;
}

/** Everything the cluster runs, built if missing (a warm machine builds nothing). */
export function build(): Built {
  const bin = script('scripts/cluster/build.sh');
  const images = script('scripts/cluster/images.sh', [bin, ...PROXY_ENVOY_VERSIONS]);
  // The NetworkPolicy controller: its own build and cache key, apart from Kubernetes'.
  const kubeRouter = script('scripts/kube-router/build.sh');
  return { bin, images, kubeRouter };
}

/** What the sidecar image is built from: the compiled package, its manifest and lock, the image scripts. */
function sidecarInputsHash(): string {
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (!e.name.endsWith('.map')) hash.update(full).update(readFileSync(full));
    }
  };
  for (const d of ['dist/src', 'scripts/image', 'bin']) walk(join(REPO_ROOT, d));
  for (const f of ['package.json', 'package-lock.json']) hash.update(readFileSync(join(REPO_ROOT, f)));
  return hash.digest('hex').slice(0, 16);
}

/** The sidecar image from `npm run image`, built again when the clone's code changed since. */
export function sidecarArchive(): ImageArchive {
  const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const file = join(REPO_ROOT, '.cache/images/gracegate.oci.tar');
  const stamp = `${file}.inputs`;
  const inputs = sidecarInputsHash();
  if (!existsSync(file) || !existsSync(stamp) || readFileSync(stamp, 'utf8').trim() !== inputs) {
    say('building the sidecar image (npm run image)');
    const res = spawnSync('npm', ['run', '--silent', 'image'], { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'], timeout: 10 * 60_000 });
    if (res.status !== 0) throw new ClusterError('npm run image failed');
    writeFileSync(stamp, `${inputs}\n`);
  }
  return { ref: `ghcr.io/gracegate/gracegate:${version}`, file };
}

export type Status = {
  kubeconfig: string;
  nodes: Array<{ name: string; ip: string; ready: boolean }>;
  ready: boolean;
  daemons: Array<{ name: string; running: boolean }>;
};

function nodesReady(): Map<string, boolean> {
  const list = kubectlJson<{ items: Array<{ metadata: { name: string }; status: { conditions?: Array<{ type: string; status: string }> } }> }>([
    'get',
    'nodes',
  ]);
  return new Map(list.items.map((n) => [n.metadata.name, n.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false]));
}

export function status(): Status {
  const ds = daemons();
  const up = ds.length > 0 && ds.every((d) => d.running) && netnsList().includes(NODES[0]!.netns);
  let ready = new Map<string, boolean>();
  if (up) {
    try {
      ready = nodesReady();
    } catch {
      ready = new Map();
    }
  }
  const nodes = NODES.map((n) => ({ name: n.name, ip: n.ip, ready: ready.get(n.name) ?? false }));
  return { kubeconfig: KUBECONFIG, nodes, ready: up && nodes.every((n) => n.ready), daemons: ds.map((d) => ({ name: d.name, running: d.running })) };
}

export type UpOptions = { bare?: boolean };

/** Which clone started this instance: /run/gracegate/<id>/owner holds its path. */
const OWNER_FILE = join(dirs.run, 'owner');

/**
 * Refuses to touch an instance another clone started and still has: its namespaces and cgroups
 * carry the same names (GRACEGATE_CLUSTER_ID names another instance). An owner whose clone is gone
 * (a CI run's temporary clone) left it behind: that one is swept.
 */
export function assertOwnInstance(): void {
  if (!existsSync(OWNER_FILE)) return;
  const owner = readFileSync(OWNER_FILE, 'utf8').trim();
  if (owner !== REPO_ROOT && existsSync(join(owner, 'package.json'))) {
    throw new ClusterError(
      `cluster instance '${CLUSTER_ID}' belongs to the clone at ${owner}: run that clone's npm run cluster -- down, or give this one another GRACEGATE_CLUSTER_ID`,
    );
  }
}

export async function up(opts: UpOptions = {}): Promise<Status> {
  assertOwnInstance();
  const current = status();
  if (current.ready && existsSync(join(CLUSTER_DIR, 'istio.done'))) {
    if (!opts.bare && !existsSync(join(CLUSTER_DIR, 'gateway.done'))) await gatewayStep(Date.now());
    else say('already up');
    return status();
  }
  if (current.daemons.length > 0 || leftovers().length > 0) {
    say('a previous cluster is partly there: taking it down first');
    await down();
  }
  const started = Date.now();
  const built = build();
  const images = [...clusterArchives(built.images), sidecarArchive()];
  say(`binaries ${built.bin}`);
  mkdirSync(CLUSTER_DIR, { recursive: true });
  for (const d of [dirs.logs, dirs.pids, dirs.etcd, join(CLUSTER_DIR, 'kubelet')]) rmSync(d, { recursive: true, force: true });
  for (const f of ['istio.done', 'gateway.done']) rmSync(join(CLUSTER_DIR, f), { force: true });
  networkUp();
  mkdirSync(dirs.run, { recursive: true });
  writeFileSync(OWNER_FILE, `${REPO_ROOT}\n`);
  ensurePki();
  writeControlPlaneConfig();
  for (const node of NODES) writeNodeConfig(node);
  const [etcd, apiserver, ...controllers] = controlPlaneDaemons(built.bin);
  startDaemon(etcd!);
  startDaemon(apiserver!);
  for (const node of NODES) {
    mkdirSync(containerdRoot(node), { recursive: true });
    startDaemon(nodeDaemons(built.bin, node)[0]!);
  }
  await waitUntil(
    'the API server (/readyz)',
    60_000,
    () => {
      const ok = kubectl(['get', '--raw', '/readyz'], { allowFailure: true, timeoutMs: 5000 }).trim();
      return ok === 'ok' ? true : assertRunning(['etcd', 'kube-apiserver']);
    },
    250,
  );
  for (const c of controllers) startDaemon(c);
  kubectlApply(KUBE_ROUTER_RBAC.map((o) => JSON.stringify(o)).join('\n---\n'));
  say(`API server ready (+${((Date.now() - started) / 1000).toFixed(1)} s); importing images`);
  await Promise.all(
    NODES.map(async (node) => {
      await waitUntil(
        `containerd on ${node.name}`,
        30_000,
        () => (existsSync(dirs.node(node).containerdSocket) ? true : assertRunning([`containerd-${node.name}`])),
        100,
      );
      const n = await importImages(node, images);
      if (n > 0) say(`${node.name}: imported ${n} image(s)`);
    }),
  );
  for (const node of NODES) {
    makeCgroupRoot(node);
    const socket = deviceSocket();
    for (const d of nodeDaemons(built.bin, node).slice(1)) startDaemon(d);
    // Every kubelet empties and binds the one device-plugin directory the machine has
    // (/var/lib/kubelet/device-plugins, not under --root-dir): two starting at once raced, and the
    // loser exited with "bind: address already in use". The next starts once this one has bound.
    // Bounded, and only a spacing: past the bound the next one starts anyway.
    for (const until = Date.now() + 15_000; Date.now() < until; await sleep(100)) {
      assertRunning([`kubelet-${node.name}`]);
      const now = deviceSocket();
      if (now !== null && now !== socket) break;
    }
  }
  const nodeDaemonNames = NODES.flatMap((n) => [`kubelet-${n.name}`, `kube-proxy-${n.name}`]);
  await waitUntil(
    'every node Ready',
    90_000,
    () => {
      const ready = nodesReady();
      return NODES.every((n) => ready.get(n.name)) ? true : assertRunning(nodeDaemonNames);
    },
    500,
  );
  // kube-router reads its Node at start: started once the nodes are registered. It answers /healthz
  // once its informers have synced and its controllers run: from then on a NetworkPolicy is enforced there.
  for (const node of NODES) startDaemon(kubeRouterDaemon(built.kubeRouter, node));
  await waitUntil(
    "kube-router's NetworkPolicy controller on every node",
    60_000,
    () => (NODES.every((n) => kubeRouterHealthy(n.netns)) ? true : assertRunning(NODES.map((n) => `kube-router-${n.name}`))),
    500,
  );
  say(`${NODES.length} nodes Ready (+${((Date.now() - started) / 1000).toFixed(1)} s)`);
  await installCoreDns();
  await installIstio(built.bin);
  writeFileSync(join(CLUSTER_DIR, 'istio.done'), `${new Date().toISOString()}\n`);
  say(`istiod ready (+${((Date.now() - started) / 1000).toFixed(1)} s)`);
  if (!opts.bare) await gatewayStep(started);
  return status();
}

async function gatewayStep(started: number): Promise<void> {
  await installDefaultGateway();
  writeFileSync(join(CLUSTER_DIR, 'gateway.done'), `${new Date().toISOString()}\n`);
  say(`gateway ready (+${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

/** Which kubelets' shared device-plugin socket is there (inode and change time), or null while there is none. */
function deviceSocket(): string | null {
  try {
    const st = statSync('/var/lib/kubelet/device-plugins/kubelet.sock');
    return `${st.ino}:${st.ctimeMs}`;
  } catch {
    return null;
  }
}

function kubeRouterHealthy(netns: string): boolean {
  const [cmd, ...args] = inNetns(netns, 'curl', ['-sf', '--max-time', '2', `http://127.0.0.1:${KUBE_ROUTER_HEALTH_PORT}/healthz`]);
  const res = spawnSync(cmd!, args, { encoding: 'utf8', timeout: 5000 });
  return res.status === 0;
}

/** undefined while every named daemon runs; throws with its log's tail when one has died. */
function assertRunning(names: string[]): undefined {
  for (const d of daemons()) {
    if (names.includes(d.name) && !d.running) throw new ClusterError(`${d.name} exited:\n${daemonLogTail(d.name)}`);
  }
  return undefined;
}

/** Runs argv without blocking the event loop, bounded by `timeoutMs`; a failure is left to the sweep after it. */
function runAsync(cmd: string, args: readonly string[], timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    execFile(cmd, [...args], { timeout: timeoutMs, killSignal: 'SIGKILL' }, () => resolve());
  });
}

/**
 * Stops the cluster: kubelets and proxies first, then every pod sandbox through containerd's CRI,
 * containerd, the control plane; then sweeps what a crash could have left (processes under the
 * cluster's folders, mounts, pod namespaces, cgroups, the namespaces themselves). Harmless on nothing.
 */
export async function down(): Promise<void> {
  assertOwnInstance();
  // The nodes are independent of each other: each is taken down at once, in the same order.
  const crictl = join(REPO_ROOT, '.cache/tools/crictl-v1.37.0/crictl');
  await Promise.all(
    NODES.map(async (node) => {
      await stopDaemon(`kubelet-${node.name}`);
      await stopDaemon(`kube-proxy-${node.name}`);
      await stopDaemon(`kube-router-${node.name}`);
      const socket = dirs.node(node).containerdSocket;
      // Stop and remove every sandbox: containerd tears its network namespace down through CNI.
      if (existsSync(socket) && existsSync(crictl))
        await runAsync(crictl, ['--runtime-endpoint', `unix://${socket}`, '--timeout', '20s', 'rmp', '--all', '--force'], 60_000);
      await stopDaemon(`containerd-${node.name}`, 10_000);
    }),
  );
  for (const name of ['kube-scheduler', 'kube-controller-manager', 'kube-apiserver', 'etcd']) await stopDaemon(name);
  await sweep();
  for (const f of ['istio.done', 'gateway.done']) rmSync(join(CLUSTER_DIR, f), { force: true });
}

/**
 * Imports the sidecar image of the clone's code as it is now into every node (built again first
 * when the code changed): a cluster that has been up for a while runs the image of the code under
 * test, not the one it started with. Nothing to do when the nodes have it already.
 */
export async function refreshSidecarImage(): Promise<void> {
  const image = sidecarArchive();
  await Promise.all(NODES.map((node) => importImages(node, [image])));
}

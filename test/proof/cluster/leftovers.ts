/**
 * What a cluster can leave on the machine, found and removed: processes (the daemons, container
 * shims and every process inside the cluster's namespaces), mounts under its folders, network
 * namespaces (the cluster's and containerd's `cni-*`), cgroups under the kubelets' roots, and in the
 * host's own namespace: interfaces, private-address listeners, KUBE iptables chains (kube-proxy's
 * and kube-router's: KUBE-ROUTER-*, KUBE-POD-FW-*, KUBE-NWPLCY-*) and kube-router's ipsets. The test
 * after every cluster run asserts `leftovers()` is empty.
 */
import { existsSync, readFileSync, readdirSync, readlinkSync, rmSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { containerdRoot } from './components';
import { CLUSTER_DIR, NETNS_NAMES, NODES, dirs } from './layout';
import { netnsList, networkDown, podNetnsNames } from './network';
import { run, sleep } from './sh';

/** Paths whose mounts and processes belong to the cluster. */
function ownedPaths(): string[] {
  return [CLUSTER_DIR, dirs.run, ...NODES.map((n) => containerdRoot(n))];
}

const CGROUP_ROOT = '/sys/fs/cgroup';

function netnsInodes(): Set<number> {
  const inodes = new Set<number>();
  for (const ns of [...NETNS_NAMES, ...podNetnsNames()]) {
    try {
      inodes.add(statSync(`/run/netns/${ns}`).ino);
    } catch {
      // not there
    }
  }
  return inodes;
}

/** Pids of processes that belong to the cluster: in one of its namespaces or its kubelets' cgroups, or naming its paths. */
export function clusterProcesses(): number[] {
  const inodes = netnsInodes();
  const owned = ownedPaths();
  const cgroupRoots = NODES.map((n) => `:${n.cgroupRoot}/`);
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const link = readlinkSync(`/proc/${pid}/ns/net`);
      const ino = Number(/\[(\d+)\]/.exec(link)?.[1]);
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      // A container's processes live in a pod's own namespace, which containerd names cni-*: their
      // cgroup, under the node's kubelet root, says whose they are.
      const cgroups = readFileSync(`/proc/${pid}/cgroup`, 'utf8');
      if (inodes.has(ino) || owned.some((p) => cmdline.includes(p)) || cgroupRoots.some((r) => cgroups.includes(r))) pids.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

export function clusterMounts(): string[] {
  // containerd's pod namespaces only where podNetnsNames() can say they are this instance's.
  const owned = [...ownedPaths(), ...[...NETNS_NAMES, ...podNetnsNames()].map((n) => `/run/netns/${n}`)];
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m !== '' && owned.some((p) => m.startsWith(p)));
}

export function clusterCgroups(): string[] {
  const found: string[] = [];
  if (!existsSync(CGROUP_ROOT)) return found;
  for (const controller of readdirSync(CGROUP_ROOT)) {
    for (const node of NODES) {
      const dir = join(CGROUP_ROOT, controller, node.cgroupRoot);
      if (existsSync(dir)) found.push(dir);
    }
  }
  return found;
}

/** Interfaces in the host's namespace that a cluster makes (none when it is built right). */
function hostInterfaces(): string[] {
  return run('ip', ['-o', 'link', 'show'], { allowFailure: true })
    .split('\n')
    .map((l) => /^\d+: ([^:@]+)/.exec(l)?.[1] ?? '')
    .filter((n) => /^(cni0|veth|nodes$|node\d)/.test(n));
}

function hostPrivateListeners(): string[] {
  return run('ss', ['-ltnH'], { allowFailure: true })
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[3] ?? '')
    .filter((a) => /^(10\.|172\.(1[6-9]|2\d|3[01])\.|192\.168\.)/.test(a));
}

/**
 * kube-router's ipsets (KUBE-SRC-*, KUBE-DST-*, kube-router-*) in the host's namespace: it makes them in
 * the node namespaces only, where they go with the namespace; one here would mean it ran outside.
 */
function hostKubeRouterIpsets(): string[] {
  return run('ipset', ['list', '-n'], { allowFailure: true })
    .split('\n')
    .filter((l) => /^(KUBE-|kube-router)/i.test(l));
}

function hostKubeChains(): string[] {
  return run('iptables', ['-S'], { allowFailure: true })
    .split('\n')
    .filter((l) => l.includes('KUBE'));
}

/** Every trace of a cluster still on the machine, one line each; empty when there is none. */
export function leftovers(): string[] {
  const out: string[] = [];
  for (const pid of clusterProcesses()) {
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 120);
    } catch {
      continue;
    }
    out.push(`process ${pid}: ${cmd}`);
  }
  for (const m of clusterMounts()) out.push(`mount ${m}`);
  const ns = new Set(netnsList());
  for (const n of [...NETNS_NAMES, ...podNetnsNames()]) if (ns.has(n)) out.push(`network namespace ${n}`);
  for (const c of clusterCgroups()) out.push(`cgroup ${c}`);
  for (const i of hostInterfaces()) out.push(`host interface ${i}`);
  for (const l of hostPrivateListeners()) out.push(`host listener on ${l}`);
  for (const r of hostKubeChains()) out.push(`host iptables ${r}`);
  for (const set of hostKubeRouterIpsets()) out.push(`host ipset ${set}`);
  if (existsSync(dirs.run)) out.push(`folder ${dirs.run}`);
  if (existsSync('/run/gracegate') && readdirSync('/run/gracegate').length === 0) out.push('folder /run/gracegate');
  return out;
}

/** Removes every trace leftovers() can see: kills, unmounts (deepest first), deletes, rmdirs. */
export async function sweep(): Promise<void> {
  for (let round = 0; round < 3; round++) {
    const pids = clusterProcesses();
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await sleep(300);
  }
  const mounts = clusterMounts().sort((a, b) => b.length - a.length);
  for (const m of mounts) run('umount', ['-l', m], { allowFailure: true });
  networkDown();
  for (const m of clusterMounts()) run('umount', ['-l', m], { allowFailure: true });
  for (const n of podNetnsNames()) rmSync(`/run/netns/${n}`, { force: true });
  // A cgroup goes only once its last task has: killed processes take a moment to be reaped.
  for (let round = 0; round < 10 && clusterCgroups().length > 0; round++) {
    for (const pid of clusterProcesses()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    for (const dir of clusterCgroups()) removeCgroupTree(dir);
    if (clusterCgroups().length > 0) await sleep(300);
  }
  rmSync(dirs.run, { recursive: true, force: true });
  try {
    rmdirSync('/run/gracegate');
  } catch {
    // another instance's folder is in it, or it is gone
  }
}

function removeCgroupTree(dir: string): void {
  let entries: string[] = [];
  try {
    entries = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return;
  }
  for (const e of entries) removeCgroupTree(join(dir, e));
  try {
    rmdirSync(dir);
  } catch {
    // still has tasks (a process we could not kill): leftovers() reports it
  }
}

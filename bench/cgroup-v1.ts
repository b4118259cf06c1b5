/**
 * cgroup v1 `cpu` groups for a benchmark (bench/hc-cpu-share-bench.ts): a parent of its own under
 * /sys/fs/cgroup/cpu, children with a `cpu.shares` and a CFS quota, processes moved into them, and a
 * cleanup that leaves nothing behind, synchronous so that it can run from a signal handler or at
 * exit: every process the bench put in its groups is killed, anything left in them is moved back to
 * the root group, and every group it made is removed.
 */
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const CPU_ROOT = '/sys/fs/cgroup/cpu';

/**
 * Throws, naming what is missing, unless this process is root and the `cpu` controller is
 * cgroup v1 mounted at /sys/fs/cgroup/cpu (or at a directory it links to, e.g. `cpu,cpuacct`) with
 * `cpu.shares` and CFS bandwidth (`cpu.cfs_quota_us`, `cpu.cfs_period_us`).
 */
export function requireCgroupV1Cpu(what: string): void {
  const uid = process.getuid?.();
  if (uid !== 0) {
    throw new Error(`${what}: must run as root (uid 0) to make cgroups under ${CPU_ROOT}; this process runs as uid ${uid ?? 'unknown'}`);
  }
  let real: string;
  try {
    real = fs.realpathSync(CPU_ROOT);
  } catch {
    throw new Error(
      `${what}: ${CPU_ROOT} does not exist: the cpu controller is not mounted as cgroup v1 there (a cgroup v2-only host has no per-controller hierarchies)`,
    );
  }
  const mounts = fs
    .readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => f[1] === real);
  // The last mount on a path is the one in effect (a later one hides those beneath it).
  const top = mounts[mounts.length - 1];
  if (!top || top[2] !== 'cgroup' || !(top[3] ?? '').split(',').includes('cpu')) {
    const found = mounts.map((f) => `${f[2]} (${f[3]})`).join(', then ') || 'nothing';
    throw new Error(
      `${what}: the cpu controller is not cgroup v1 at ${CPU_ROOT} (mounted there: ${found}; the last is in effect); this bench needs cgroup v1's cpu.shares and cpu.cfs_quota_us`,
    );
  }
  for (const file of ['cpu.shares', 'cpu.cfs_quota_us', 'cpu.cfs_period_us', 'cgroup.procs']) {
    if (!fs.existsSync(path.join(CPU_ROOT, file))) {
      throw new Error(`${what}: ${path.join(CPU_ROOT, file)} is missing${file.startsWith('cpu.cfs') ? ' (a kernel without CONFIG_CFS_BANDWIDTH)' : ''}`);
    }
  }
}

/** A sleep that blocks (for the synchronous cleanup only). */
function blockFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function pidsIn(dir: string): number[] {
  try {
    return fs
      .readFileSync(path.join(dir, 'cgroup.procs'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map(Number);
  } catch {
    return [];
  }
}

export class CpuCgroups {
  /** Groups made, parent first. */
  private readonly made: string[] = [];
  /** The bench's processes, whether moved into a group yet or not: the only ones the cleanup kills. */
  private readonly ours = new Set<ChildProcess>();
  private cleaned = false;
  readonly parent: string;

  /** Makes the parent group `name` under CPU_ROOT with `shares`; refuses one that exists (another run's). */
  constructor(name: string, shares: number) {
    this.parent = path.join(CPU_ROOT, name);
    fs.mkdirSync(this.parent);
    this.made.push(this.parent);
    try {
      fs.writeFileSync(path.join(this.parent, 'cpu.shares'), String(shares));
    } catch (err) {
      this.cleanupSync();
      throw err;
    }
  }

  /** A process of the bench's, killed by the cleanup if it still runs then (spawned, not moved yet). */
  adopt(proc: ChildProcess): void {
    if (this.ours.has(proc)) return;
    this.ours.add(proc);
    proc.once('exit', () => this.ours.delete(proc));
  }

  /** A child group of the parent with `shares` and a CFS quota (-1: none) per `periodUs`. */
  child(name: string, shares: number, quotaUs: number, periodUs: number): string {
    const dir = path.join(this.parent, name);
    fs.mkdirSync(dir);
    this.made.push(dir);
    fs.writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(periodUs));
    fs.writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(quotaUs));
    fs.writeFileSync(path.join(dir, 'cpu.shares'), String(shares));
    const read = (f: string) => Number(fs.readFileSync(path.join(dir, f), 'utf8').trim());
    if (read('cpu.shares') !== shares || read('cpu.cfs_quota_us') !== quotaUs) {
      throw new Error(
        `${dir}: the kernel kept cpu.shares ${read('cpu.shares')} and cpu.cfs_quota_us ${read('cpu.cfs_quota_us')}, not ${shares} and ${quotaUs}`,
      );
    }
    return dir;
  }

  /** Moves process `proc` (all its threads) into `dir`, and checks that it is there. */
  move(proc: ChildProcess, dir: string): void {
    this.adopt(proc);
    const pid = proc.pid;
    if (pid === undefined || proc.exitCode !== null || proc.signalCode !== null) throw new Error(`cannot move a process that is not running into ${dir}`);
    fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(pid));
    const rel = `/${path.relative(CPU_ROOT, dir)}`;
    const line = fs
      .readFileSync(`/proc/${pid}/cgroup`, 'utf8')
      .split('\n')
      .find((l) => l.split(':')[1]?.split(',').includes('cpu'));
    if (line?.split(':')[2] !== rel) throw new Error(`process ${pid} is in '${line}', not in ${rel}`);
    // cgroup.procs moves the whole thread group: Node's worker threads (libuv's pool, V8's) too.
    const tasks = new Set(fs.readFileSync(path.join(dir, 'tasks'), 'utf8').split('\n'));
    const outside = fs.readdirSync(`/proc/${pid}/task`).filter((tid) => !tasks.has(tid));
    if (outside.length > 0) throw new Error(`threads ${outside.join(' ')} of process ${pid} are not in ${dir}`);
  }

  /** Removes a child group: its processes must have gone (or they are moved back to the root first). */
  remove(dir: string): void {
    this.rmdir(dir);
    this.made.splice(this.made.indexOf(dir), 1);
  }

  /**
   * Kills every process of the bench's that still runs (Node has not reaped it, so its pid is still
   * its own) and every process in a group the bench made (only the bench puts one there: a process
   * spawned into a group before the bench heard of it), then removes every group, children first,
   * moving anything left in one back to the root group. Runs once.
   */
  cleanupSync(): void {
    if (this.cleaned) return;
    this.cleaned = true;
    for (const proc of this.ours) {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    }
    for (const dir of [...this.made].reverse()) {
      for (const pid of pidsIn(dir)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // it exited meanwhile
        }
      }
      this.rmdir(dir);
    }
    this.made.length = 0;
  }

  /** Moves whatever is still in `dir` back to the root group (a process the bench killed may linger a moment). */
  private empty(dir: string): void {
    for (const pid of pidsIn(dir)) {
      try {
        fs.writeFileSync(path.join(CPU_ROOT, 'cgroup.procs'), String(pid));
      } catch {
        // it exited meanwhile
      }
    }
  }

  private rmdir(dir: string): void {
    this.empty(dir);
    for (let attempt = 0; ; attempt++) {
      try {
        fs.rmdirSync(dir);
        return;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return;
        if (code !== 'EBUSY' || attempt >= 50) {
          process.stderr.write(`cgroup ${dir} could not be removed: ${(err as Error).message} (holds: ${pidsIn(dir).join(' ') || 'no process'})\n`);
          return;
        }
        this.empty(dir);
        blockFor(20);
      }
    }
  }
}

/**
 * Running things for the cluster: bounded synchronous commands, commands inside a network
 * namespace (`nsenter --net`, which keeps the host's mount namespace: the kubelet's volume mounts
 * and containerd's rootfs mounts must see each other), and daemons that outlive the command that
 * started them, each with a pid file and a log file.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { sleep, waitFor } from '../../support/wait';
import { dirs } from './layout';

export class ClusterError extends Error {}

export type RunOptions = { timeoutMs?: number; input?: string; env?: NodeJS.ProcessEnv; allowFailure?: boolean };

/** Runs `cmd args`, bounded in time; its stdout, or a ClusterError with its stderr. */
export function run(cmd: string, args: readonly string[], opts: RunOptions = {}): string {
  const res = spawnSync(cmd, args, {
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 60_000,
    input: opts.input,
    env: opts.env ?? process.env,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.error) {
    if (opts.allowFailure) return '';
    throw new ClusterError(`${cmd} ${args.join(' ')}: ${res.error.message}`);
  }
  if (res.status !== 0 && !opts.allowFailure) {
    throw new ClusterError(`${cmd} ${args.join(' ')} exited ${res.status ?? res.signal}: ${(res.stderr || res.stdout).trim().slice(-2000)}`);
  }
  return res.stdout;
}

/** What runs a command inside network namespace `netns` (prepend it to the command's argv). */
export function netnsPrefix(netns: string): string[] {
  return ['nsenter', `--net=/run/netns/${netns}`, '--'];
}

/** The argv that runs `cmd args` inside network namespace `netns`. */
export function inNetns(netns: string, cmd: string, args: readonly string[] = []): string[] {
  return [...netnsPrefix(netns), cmd, ...args];
}

export function runIn(netns: string, cmd: string, args: readonly string[], opts: RunOptions = {}): string {
  const [head, ...rest] = inNetns(netns, cmd, args);
  return run(head!, rest, opts);
}

/** The machine's cache folder (as scripts/cache-dir.sh computes it). */
export function machineCache(): string {
  const dir = process.env.GRACEGATE_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'gracegate');
  mkdirSync(dir, { recursive: true });
  return dir;
}

export type Daemon = { name: string; argv: readonly string[]; env?: NodeJS.ProcessEnv };

/** Starts a daemon detached from this process, output to logs/NAME.log, pid in pids/NAME.pid. */
export function startDaemon(d: Daemon): number {
  mkdirSync(dirs.logs, { recursive: true });
  mkdirSync(dirs.pids, { recursive: true });
  const log = openSync(join(dirs.logs, `${d.name}.log`), 'a');
  const [cmd, ...args] = d.argv;
  const child = spawn(cmd!, args, { detached: true, stdio: ['ignore', log, log], env: { ...process.env, ...d.env } });
  closeSync(log);
  if (child.pid === undefined) throw new ClusterError(`could not start ${d.name} (${cmd})`);
  child.unref();
  writeFileSync(join(dirs.pids, `${d.name}.pid`), `${child.pid}\n`);
  return child.pid;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The daemons with a pid file, and whether each still runs. */
export function daemons(): Array<{ name: string; pid: number; running: boolean }> {
  if (!existsSync(dirs.pids)) return [];
  return readdirSync(dirs.pids)
    .filter((f) => f.endsWith('.pid'))
    .map((f) => {
      const pid = Number(readFileSync(join(dirs.pids, f), 'utf8').trim());
      return { name: f.slice(0, -4), pid, running: Number.isInteger(pid) && pid > 0 && alive(pid) };
    });
}

export function daemonLogTail(name: string, lines = 40): string {
  const file = join(dirs.logs, `${name}.log`);
  if (!existsSync(file)) return `(no log for ${name})`;
  return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
}

/** Stops one daemon: SIGTERM, then SIGKILL after graceMs; removes its pid file. */
export async function stopDaemon(name: string, graceMs = 5000): Promise<void> {
  const file = join(dirs.pids, `${name}.pid`);
  if (!existsSync(file)) return;
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // gone
    }
    const deadline = Date.now() + graceMs;
    while (alive(pid) && Date.now() < deadline) await sleep(50);
    if (alive(pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
      const killDeadline = Date.now() + 5000;
      while (alive(pid) && Date.now() < killDeadline) await sleep(50);
    }
  }
  rmSync(file, { force: true });
}

export { sleep };

/** The suite's waitFor (test/support/wait.ts), polling every 200 ms by default: the cluster's checks run kubectl. */
export function waitUntil<T>(what: string, timeoutMs: number, check: () => T | undefined | Promise<T | undefined>, everyMs = 200): Promise<T> {
  return waitFor(what, timeoutMs, check, everyMs);
}

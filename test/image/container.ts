import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Runs an image the way a kubelet's container runtime does, without an engine: `umoci unpack`
 * makes an OCI runtime bundle from the image (root filesystem + the runtime config derived from the
 * image's user, entrypoint, env and working directory), and runc (containerd's default runtime)
 * runs it. Each run gets the pod's securityContext: read-only root filesystem, every capability
 * dropped, no privilege escalation; what must be writable is a tmpfs, as an emptyDir would be.
 */

export type Bundle = { dir: string; config: RuntimeConfig };
type Mount = { destination: string; type: string; source: string; options?: string[] };
type RuntimeConfig = {
  process: {
    args: string[];
    env: string[];
    cwd: string;
    user: { uid: number; gid: number };
    terminal?: boolean;
    capabilities?: object;
    noNewPrivileges?: boolean;
  };
  root: { path: string; readonly?: boolean };
  mounts: Mount[];
  linux: { namespaces: { type: string }[] } & Record<string, unknown>;
} & Record<string, unknown>;

export type RunSpec = {
  /** The process, as a pod's `command` + `args` (the image's entrypoint is not prepended). */
  args: string[];
  /** Added to the image's Env. */
  env?: Record<string, string>;
  cwd?: string;
  /** Share this host's network namespace, as the containers of one pod share theirs. */
  hostNetwork?: boolean;
  /** Writable tmpfs mounts (an emptyDir). */
  tmpfs?: string[];
  binds?: { source: string; destination: string; readOnly?: boolean }[];
};

/** `umoci unpack` of `layout:tag` into `dir`; the image's runtime config is read back. */
export function unpack(layout: string, tag: string, dir: string): Bundle {
  const r = spawnSync('umoci', ['unpack', '--image', `${layout}:${tag}`, dir], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`umoci unpack ${layout}:${tag}: ${r.stderr}`);
  return { dir, config: JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as RuntimeConfig };
}

let runs = 0;
const live = new Set<string>();
process.on('exit', () => {
  for (const id of live) spawnSync('runc', ['delete', '--force', id]);
});

function prepare(bundle: Bundle, spec: RunSpec): { id: string; dir: string } {
  const id = `gracegate-test-${process.pid}-${++runs}`;
  const dir = join(bundle.dir, 'runs', id);
  mkdirSync(dir, { recursive: true });
  const base = bundle.config;
  const config: RuntimeConfig = {
    ...base,
    process: {
      ...base.process,
      args: spec.args,
      env: [...base.process.env, ...Object.entries(spec.env ?? {}).map(([k, v]) => `${k}=${v}`)],
      cwd: spec.cwd ?? base.process.cwd,
      terminal: false,
      // securityContext: capabilities drop ALL, allowPrivilegeEscalation false.
      capabilities: { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] },
      noNewPrivileges: true,
    },
    // securityContext: readOnlyRootFilesystem true.
    root: { path: join(bundle.dir, 'rootfs'), readonly: true },
    mounts: [
      ...base.mounts.filter((m) => !(spec.hostNetwork && m.destination === '/sys')),
      // sysfs cannot be mounted from the host's network namespace: bind it read-only instead.
      ...(spec.hostNetwork ? [{ destination: '/sys', type: 'bind', source: '/sys', options: ['rbind', 'ro', 'nosuid', 'noexec', 'nodev'] }] : []),
      ...(spec.tmpfs ?? []).map((destination) => ({ destination, type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'nodev', 'mode=1777', 'size=16m'] })),
      ...(spec.binds ?? []).map((b) => ({
        destination: b.destination,
        type: 'bind',
        source: b.source,
        options: ['rbind', b.readOnly === false ? 'rw' : 'ro'],
      })),
    ],
    linux: {
      ...base.linux,
      namespaces: base.linux.namespaces.filter((n) => !(spec.hostNetwork && n.type === 'network')),
    },
  };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  return { id, dir };
}

export type RunResult = { status: number | null; stdout: string; stderr: string; ms: number };

/** Runs the container to completion, bounded by `timeoutMs`. */
export function runContainer(bundle: Bundle, spec: RunSpec, timeoutMs = 60_000): RunResult {
  const { id, dir } = prepare(bundle, spec);
  live.add(id);
  const started = process.hrtime.bigint();
  const r = spawnSync('runc', ['run', '--bundle', dir, id], {
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  spawnSync('runc', ['delete', '--force', id]);
  live.delete(id);
  if (r.error) throw new Error(`runc run ${id}: ${r.error.message}; stderr: ${r.stderr}`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ms };
}

export type RunningContainer = {
  id: string;
  child: ChildProcess;
  output(): string;
  /** `runc exec`: a second process in the running container (what a kubelet does for an exec preStop). */
  exec(args: string[], timeoutMs: number): Promise<{ status: number | null; stdout: string; stderr: string }>;
  stop(): Promise<void>;
};

/** Starts the container in the background; `stop()` kills and deletes it. */
export function startContainer(bundle: Bundle, spec: RunSpec): RunningContainer {
  const { id, dir } = prepare(bundle, spec);
  live.add(id);
  const child = spawn('runc', ['run', '--bundle', dir, id], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    id,
    child,
    output: () => output,
    exec(args, timeoutMs) {
      return new Promise((resolve, reject) => {
        const p = spawn('runc', ['exec', id, ...args], { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
        let stdout = '';
        let stderr = '';
        p.stdout!.on('data', (d: Buffer) => {
          stdout += d.toString();
        });
        p.stderr!.on('data', (d: Buffer) => {
          stderr += d.toString();
        });
        p.once('error', reject);
        p.once('close', (status) => resolve({ status, stdout, stderr }));
      });
    },
    async stop() {
      spawnSync('runc', ['kill', id, 'KILL']);
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      spawnSync('runc', ['delete', '--force', id]);
      live.delete(id);
    },
  };
}

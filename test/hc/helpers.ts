/** Shared helpers of the hc tests: a fake clock and Envoy, HTTP calls, a spawned sidecar. */
import { spawn, type ChildProcess } from 'node:child_process';
import * as http from 'node:http';
import * as path from 'node:path';
import { hcConfigSchema, type HcConfig, type HcConfigInput } from '../../src/contract/hc-config';
import type { Clock, EnvoyPort, EnvoyProfile, EnvoyServerState, LogLevel } from '../../src/hc/types';
import type { StateBody } from '../../src/contract/hc';

import { REPO_ROOT } from '../support/repo';
import { waitFor as waitForEvent } from '../support/wait';
import { testDir } from '../support/tmp';

export { REPO_ROOT };

/** Lets pending promise callbacks run (not a sleep: no time passes on the fake clock). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/** A clock whose time moves only when the test says so. */
export class FakeClock implements Clock {
  private timers: { at: number; seq: number; fn: () => void }[] = [];
  private seq = 0;
  constructor(public current = Date.UTC(2026, 0, 1)) {}
  now = () => this.current;
  setTimer = (ms: number, fn: () => void) => {
    const timer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  };
  /** Moves time forward, firing due timers in order and letting their promises settle. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await flush();
    for (;;) {
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = due.at;
      due.fn();
      await flush();
    }
    this.current = target;
    await flush();
  }
}

/** An Envoy whose answers the test sets; records every call. */
export class FakeEnvoy implements EnvoyPort {
  ready: EnvoyServerState | Error = 'LIVE';
  count: number | Error = 0;
  drainError: Error | undefined;
  readonly calls: string[] = [];
  async serverState(): Promise<EnvoyServerState> {
    this.calls.push('ready');
    if (this.ready instanceof Error) throw this.ready;
    return this.ready;
  }
  async inFlight(): Promise<number> {
    this.calls.push('stats');
    if (this.count instanceof Error) throw this.count;
    return this.count;
  }
  /** What drainSent() answers (a start without a trusted state file asks it). */
  drained: boolean | Error = false;
  async drainSent(): Promise<boolean> {
    if (this.drained instanceof Error) throw this.drained;
    return this.drained;
  }
  async drainListeners(): Promise<void> {
    this.calls.push('drain');
    if (this.drainError) throw this.drainError;
  }
  profile(): EnvoyProfile {
    return {
      versionString: null,
      version: null,
      versionUnknown: { reason: 'not-read-yet', detail: 'fake', failures: 0 },
      drainCalls: ['/drain_listeners', '/drain_listeners?graceful'],
      drainCallsBasis: 'fallback',
      drainCallsWhy: 'fake',
      statsPath: '/stats',
      drainStrategy: null,
      counting: null,
      lastCount: null,
    };
  }
}

export function testConfig(input: HcConfigInput = {}): HcConfig {
  return hcConfigSchema.parse({ stateFile: '/nonexistent/unused.json', ...input });
}

export interface LogLine {
  level: LogLevel;
  msg: string;
  fields?: Readonly<Record<string, unknown>> | undefined;
}

export function collectingLogger(): { lines: LogLine[]; log: (level: LogLevel, msg: string, fields?: Readonly<Record<string, unknown>>) => void } {
  const lines: LogLine[] = [];
  return { lines, log: (level, msg, fields) => lines.push({ level, msg, fields }) };
}

export interface Reply {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** One HTTP request with a hard timeout; rejects with the socket error (e.g. ECONNREFUSED). */
export function request(
  url: string,
  options: {
    method?: string;
    headers?: http.OutgoingHttpHeaders;
    body?: string;
    timeoutMs?: number;
    agent?: http.Agent | false;
    /** The caller's address (another loopback address plays a caller from elsewhere). */
    localAddress?: string;
  } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: options.agent ?? false,
        signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
        ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The suite's waitFor (test/support/wait.ts) with the hc tests' argument order and defaults: 5 s, every 20 ms. */
export function waitFor<T>(label: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 5_000, everyMs = 20): Promise<T> {
  return waitForEvent(label, timeoutMs, check, everyMs);
}

/** A state file in a folder of its own, removed when the test file's process exits. */
export function tempStateFile(): string {
  return path.join(testDir('gracegate-hc-'), 'state.json');
}

export interface SpawnedHc {
  readonly proc: ChildProcess;
  readonly healthUrl: string;
  readonly controlUrl: string;
  readonly witnessUrl: string;
  /** The read-only metrics port (GET /metrics). */
  readonly metricsUrl: string;
  readonly logs: Record<string, unknown>[];
  get(p: string): Promise<Reply>;
  post(p: string): Promise<Reply>;
  state(): Promise<StateBody>;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL (a crash) and wait for the exit. */
  kill(): Promise<void>;
  /**
   * The exit code of an exit already under way (after a SIGTERM the test sent itself), rejecting
   * after `boundMs`. Read from the listener attached at spawn, so an exit that came first is seen.
   */
  exit(boundMs: number): Promise<number | null>;
}

/** The sidecar's arguments for a fast drain-first against `envoyAdmin`: a 50 ms poll, a 0.2 s LB buffer, its own state file. */
export function fastDrainFirst(envoyAdmin: string): string[] {
  return ['--envoy-admin', envoyAdmin, '--sequence', 'drain-first', '--state-file', tempStateFile(), '--poll-interval', '0.05', '--lb-buffer', '0.2'];
}

/** Starts the real `gracegate hc` process on free ports and waits for its "listening" line. */
export async function spawnHc(args: string[], timeoutMs = 5_000, env: NodeJS.ProcessEnv = {}): Promise<SpawnedHc> {
  const proc = spawn(
    process.execPath,
    // GRACEGATE_HC_BIN: another build's CLI, for a benchmark's before/after (bench/hc-pipeline-bench.ts).
    [
      process.env['GRACEGATE_HC_BIN'] ?? path.join(REPO_ROOT, 'bin', 'gracegate.js'),
      'hc',
      '--health-port',
      '0',
      '--control-port',
      '0',
      '--witness-port',
      '0',
      '--metrics-port',
      '0',
      ...args,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    },
  );
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  let buffered = '';
  proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const listening = new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gracegate hc did not start within ${timeoutMs}ms: ${stderr}`)), timeoutMs);
    proc.stdout!.on('data', (c: Buffer) => {
      buffered += c.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          logs.push(entry);
          if (entry['msg'] === 'listening') {
            clearTimeout(timer);
            resolve(entry);
          }
        } catch {
          logs.push({ raw: line });
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gracegate hc exited with ${code}: ${stderr}`));
    });
  });
  const ready = await listening;
  const healthUrl = `http://127.0.0.1:${String(ready['healthPort'])}`;
  const controlUrl = `http://127.0.0.1:${String(ready['controlPort'])}`;
  const witnessUrl = `http://127.0.0.1:${String(ready['witnessPort'])}`;
  const metricsUrl = `http://127.0.0.1:${String(ready['metricsPort'])}`;
  return {
    proc,
    healthUrl,
    controlUrl,
    witnessUrl,
    metricsUrl,
    logs,
    get: (p) => request(`${healthUrl}${p}`),
    post: (p) => request(`${controlUrl}${p}`, { method: 'POST', timeoutMs: 15_000 }),
    state: async () => JSON.parse((await request(`${controlUrl}/state`)).body) as StateBody,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGKILL');
      await exited;
    },
    exit(boundMs) {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`gracegate hc did not exit within ${boundMs} ms`)), boundMs);
      });
      return Promise.race([exited, bound]).finally(() => clearTimeout(timer));
    },
  };
}

/** The six events of GET /state, by id. */
export function eventTimes(state: StateBody): Record<number, { at: number | null; estimated: boolean; note?: string }> {
  const out: Record<number, { at: number | null; estimated: boolean; note?: string }> = {};
  for (const e of state.events) {
    out[e.id] = { at: e.at === null ? null : Date.parse(e.at), estimated: e.estimated, ...(e.note ? { note: e.note } : {}) };
  }
  return out;
}

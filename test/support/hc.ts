/** The real `gracegate hc` process, as the tests and the benchmarks run it: on free ports, its log lines kept. */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import type { StateBody } from '../../src/contract/hc';
import { request, type Reply } from './http';
import { REPO_ROOT } from './repo';
import { testDir } from './tmp';

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
    // GRACEGATE_HC_BIN: another build's CLI, for a benchmark's before/after (bench/hc-pipeline-bench.ts),
    // or a launcher installed apart (test/cli/launcher.test.ts).
    [
      env['GRACEGATE_HC_BIN'] ?? process.env['GRACEGATE_HC_BIN'] ?? path.join(REPO_ROOT, 'bin', 'gracegate.js'),
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

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, TOOLS } from '../support/repo';

export { TOOLS };

export function requireTool(path: string): string {
  if (!existsSync(path)) throw new Error(`${path} missing: run 'bash scripts/prepare-test-env.sh' (npm test does)`);
  return path;
}

export type RunResult = { status: number | null; stdout: string; stderr: string };

/** Runs a binary with a bounded wall time; the environment is the caller's plus `env`. */
export function run(cmd: string, args: string[], options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): RunResult {
  const r = spawnSync(cmd, args, {
    cwd: options.cwd ?? REPO_ROOT,
    input: options.input,
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 30_000,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A temp directory removed when the test file's process exits. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Environment for one helm: its own data/config/cache homes, so plugins never leak between runs. */
export function helmHome(root: string): NodeJS.ProcessEnv {
  return {
    HELM_DATA_HOME: join(root, 'data'),
    HELM_CONFIG_HOME: join(root, 'config'),
    HELM_CACHE_HOME: join(root, 'cache'),
    HELM_PLUGINS: join(root, 'data', 'plugins'),
  };
}

/** The object without null values and empty maps: what kubectl kustomize leaves out (a chart's `env:`, `annotations: {}`). */
export function withoutEmpty(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutEmpty);
  if (v === null || typeof v !== 'object') return v;
  const entries = Object.entries(v)
    .map(([k, x]) => [k, withoutEmpty(x)] as const)
    .filter(([, x]) => x !== null && !(typeof x === 'object' && !Array.isArray(x) && Object.keys(x as object).length === 0));
  return Object.fromEntries(entries);
}

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { REPO_ROOT } from './repo';

export { REPO_ROOT };

export type CliResult = { status: number | null; stdout: string; stderr: string };

/** Runs the real `gracegate` launcher as a user would, with a bounded wall time. */
export function runCli(args: string[], options: { input?: string | Buffer; cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): CliResult {
  const result = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'gracegate.js'), ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    input: options.input,
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 30_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

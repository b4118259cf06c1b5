/**
 * The load scenario's tools: `wrk` and `h2load` (Debian's `wrk` and `nghttp2-client`, installed by
 * scripts/prepare-test-env.sh), and the compiled upstream app (app/main.go), built with the Go
 * toolchain into the machine's cache, keyed by its source, so a warm machine builds nothing.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/repo';

const APP_SOURCE = join(REPO_ROOT, 'test/proof/load/app');

/** Throws (never skips) when a tool is missing, saying how to install it. */
export function requireTool(name: 'wrk' | 'h2load' | 'haproxy' | 'go'): string {
  const found = spawnSync('bash', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  if (found.status !== 0 || found.stdout.trim() === '') {
    const hint = name === 'go' ? 'install Go (https://go.dev/dl/)' : 'run `bash scripts/prepare-test-env.sh`';
    throw new Error(`${name} is not installed: ${hint}`);
  }
  return found.stdout.trim();
}

/** `wrk -v`'s version, `h2load --version`'s. */
export function toolVersions(): { wrk: string; h2load: string } {
  const wrk = /wrk (\S+)/.exec(spawnSync('wrk', ['-v'], { encoding: 'utf8' }).stdout)?.[1] ?? 'unknown';
  const h2load = spawnSync('h2load', ['--version'], { encoding: 'utf8' }).stdout.trim();
  return { wrk: `wrk ${wrk}`, h2load };
}

function cacheDir(): string {
  const r = spawnSync('bash', [join(REPO_ROOT, 'scripts/cache-dir.sh')], { encoding: 'utf8', cwd: REPO_ROOT });
  if (r.status !== 0) throw new Error(`scripts/cache-dir.sh failed: ${r.stderr}`);
  return r.stdout.trim();
}

let built: string | undefined;

/** The load app's binary, built once per source (a minute or less cold, nothing warm). */
export function loadAppBinary(): string {
  if (built) return built;
  requireTool('go');
  const hash = createHash('sha256');
  for (const f of ['main.go', 'go.mod']) hash.update(readFileSync(join(APP_SOURCE, f)));
  const dest = join(cacheDir(), 'tools', `load-app-${hash.digest('hex').slice(0, 16)}`);
  const binary = join(dest, 'load-app');
  if (!existsSync(binary)) {
    rmSync(`${dest}.partial`, { recursive: true, force: true });
    const r = spawnSync('bash', ['-c', `. scripts/go-env.sh && cd test/proof/load/app && go build -o "$0/load-app" .`, `${dest}.partial`], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 600_000,
    });
    if (r.status !== 0) throw new Error(`building the load app failed: ${r.stderr}`);
    rmSync(dest, { recursive: true, force: true });
    renameSync(`${dest}.partial`, dest);
  }
  built = binary;
  return binary;
}

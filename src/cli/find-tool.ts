import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { GracegateError } from '../core/errors';

/** A tool gracegate runs could not be found; the message says how to point at it. */
export class ToolNotFoundError extends GracegateError {}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The binary to run for `name`: the path in the environment variable `override` (which must then
 * exist: a typo there must not silently fall back to another copy), else the first `name` on PATH.
 */
export function findTool(name: string, override: string, env: NodeJS.ProcessEnv = process.env): string {
  const given = env[override];
  if (given) {
    if (!executable(given)) throw new ToolNotFoundError(`${override}=${given}: not an executable file`);
    return given;
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  throw new ToolNotFoundError(`no '${name}' on PATH; install it, or set ${override} to its path`);
}

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './repo';

/** The bundled example specs (examples/*.yaml) of one kind, by file name, sorted. */
export function exampleSpecFiles(kind: 'GracefulGateway' | 'GracefulWorkload'): string[] {
  const dir = join(REPO_ROOT, 'examples');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .filter((f) => new RegExp(`^kind: ${kind}\\s*$`, 'm').test(readFileSync(join(dir, f), 'utf8')))
    .sort();
}

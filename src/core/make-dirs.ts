/**
 * `mkdir -p` that fails instead of looping: Node's `mkdirSync(dir, {recursive: true})` spins forever
 * on a path under /proc (the parent exists, the child gets ENOENT, and it tries again), which hung
 * `synth --out /proc/x` and would hang the sidecar's state-file write.
 */
import * as fs from 'node:fs';
import { dirname } from 'node:path';

/** Creates `dir` and its missing parents one by one; throws the first error (ENOENT, ENOTDIR, EACCES, EROFS …). */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !fs.existsSync(d); d = dirname(d)) {
    missing.push(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing.reverse()) fs.mkdirSync(d);
}

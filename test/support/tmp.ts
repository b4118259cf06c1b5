/**
 * Temporary folders for a test file: made in the system's temp folder, and removed when the test's
 * process exits (`node --test` runs each file in a process of its own), so that a run leaves nothing
 * behind there. A daemon working in one is stopped by then, or killed with the process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** A new folder `<tmp>/<prefix>XXXXXX`, removed at the process's exit. */
export function testDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (made.length === 0) process.once('exit', removeAll);
  made.push(dir);
  return dir;
}

function removeAll(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

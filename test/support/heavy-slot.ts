/**
 * One heavy phase at a time on this machine, across both test tracks (scripts/run-tests.js): a
 * termination under load whose timings a test asserts (a cluster session's deletion, an end-to-end
 * scenario, a load run) takes the slot, so it never shares the two cores with another track's
 * heaviest phase. The slot is a directory (mkdir is atomic across processes) holding its owner's
 * pid; a slot whose owner is gone is taken over. Within one process the slot is shared: a file that
 * runs scenarios side by side keeps doing so.
 *
 * Off unless GRACEGATE_HEAVY_SLOT=on. Measured in a full warm run with it on: the plain track's e2e
 * files, which run scenario after scenario, took the slot back the moment they let it go (a waiter
 * polls every 200 ms; the releasing process asks again at once), so the cluster's kubelet comparison
 * waited past its 120 s test timeout, and both tracks ran slower, one heavy phase at a time. A fair
 * queue and bounded waits would be needed before it can be on by default.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from './wait';

/** GRACEGATE_HEAVY_SLOT_DIR moves it (its own test uses a slot of its own). */
const SLOT = process.env.GRACEGATE_HEAVY_SLOT_DIR ?? join(tmpdir(), 'gracegate-heavy-slot');
const OWNER = join(SLOT, 'owner.json');
/** Longer than any one termination under load the suite runs (the cluster's longest is ~2 min). */
export const HEAVY_SLOT_WAIT_BOUND_MS = 20 * 60_000;

let holders = 0;
process.on('exit', () => {
  if (holders > 0) rmSync(SLOT, { recursive: true, force: true });
});

function ownerAlive(): { alive: boolean; what: string } {
  try {
    const owner = JSON.parse(readFileSync(OWNER, 'utf8')) as { pid: number; what: string };
    process.kill(owner.pid, 0);
    return { alive: true, what: `${owner.what} (pid ${owner.pid})` };
  } catch (err) {
    // No owner file yet (being written): alive; a pid that is gone (ESRCH): not.
    return { alive: (err as NodeJS.ErrnoException).code !== 'ESRCH', what: 'its owner' };
  }
}

async function acquire(what: string, boundMs: number): Promise<void> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    try {
      mkdirSync(SLOT);
      writeFileSync(OWNER, JSON.stringify({ pid: process.pid, what, at: new Date().toISOString() }));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = ownerAlive();
    if (!owner.alive) rmSync(SLOT, { recursive: true, force: true });
    else if (Date.now() > deadline) throw new Error(`${what}: the heavy slot was still held by ${owner.what} after ${boundMs / 1000} s`);
    else await sleep(200);
  }
}

/** Runs `fn` holding the machine's heavy slot (waiting, bounded, for another track's to end). */
export async function withHeavySlot<T>(what: string, fn: () => Promise<T>, boundMs = HEAVY_SLOT_WAIT_BOUND_MS): Promise<T> {
  if (process.env.GRACEGATE_HEAVY_SLOT !== 'on') return fn();
  if (holders === 0) await acquire(what, boundMs);
  holders++;
  try {
    return await fn();
  } finally {
    holders--;
    if (holders === 0) rmSync(SLOT, { recursive: true, force: true });
  }
}

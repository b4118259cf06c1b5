/**
 * Loopback ports for the tests' child processes to bind, one picker for every test file.
 *
 * A port is checked free by binding it once, then handed to a child that binds it later (an hc
 * starts only once its Envoy is ready, seconds after). Two test files run side by side
 * (scripts/run-tests.js), so a port checked free in one can be handed out by the other in that
 * window (EADDRINUSE in CI). Each port handed out is therefore also reserved machine-wide: a file
 * under the temp folder, created exclusively, naming the test process that holds it. A reservation
 * whose process is gone is stale and taken over; a process removes its own at exit.
 *
 * Ports are picked below the kernel's ephemeral range: every outgoing connection (the load,
 * HAProxy to the pods, the probes) takes its local port from that range, and could take a port
 * picked there before the child binds it.
 */
import { mkdirSync, openSync, closeSync, readFileSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const RESERVATIONS = join(tmpdir(), 'gracegate-test-ports');
const PICK_FROM = 10_000;
const PICK_ATTEMPTS = 200;
/** A process of the suite uses a few hundred ports at most; this bounds the files it leaves to remove. */
const MAX_HELD = 4_000;

const held = new Set<number>();
process.on('exit', () => {
  for (const port of held) rmSync(join(RESERVATIONS, String(port)), { force: true });
});

function readEphemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 12_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}
let ephemeralLow: number | undefined;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Reserves `port` for this process; false when a live process holds it. */
function reserve(port: number): boolean {
  mkdirSync(RESERVATIONS, { recursive: true });
  const path = join(RESERVATIONS, String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      held.add(port);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const owner = Number(readFileSync(path, 'utf8').trim());
      // A file being written has no pid yet: treat it as held.
      if (!Number.isInteger(owner) || owner <= 0 || owner === process.pid || alive(owner)) return false;
      rmSync(path, { force: true });
    }
  }
  return false;
}

function tryListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A loopback port free now and reserved for this process: bounded, PICK_ATTEMPTS tries. */
export async function freePort(): Promise<number> {
  ephemeralLow ??= readEphemeralLow();
  const high = ephemeralLow - 1;
  if (held.size >= MAX_HELD) throw new Error(`this test process already holds ${held.size} ports`);
  for (let i = 0; i < PICK_ATTEMPTS; i++) {
    const port = PICK_FROM + Math.floor(Math.random() * (high - PICK_FROM));
    if (held.has(port)) continue;
    if (!(await tryListen(port))) continue;
    if (reserve(port)) return port;
  }
  throw new Error(`no free loopback port in ${PICK_FROM}-${high} after ${PICK_ATTEMPTS} tries`);
}

/** reserve() for test/support/ports.test.ts: false when a live process other than this one holds the port. */
export const reserveForTest = (port: number): boolean => reserve(port);

/** The reservations on the machine (for a test that checks the picker). */
export function reservedPorts(): number[] {
  try {
    return readdirSync(RESERVATIONS)
      .map(Number)
      .filter((p) => Number.isInteger(p));
  } catch {
    return [];
  }
}

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, reservedPorts } from './ports';

const RESERVATIONS = join(tmpdir(), 'gracegate-test-ports');

test('freePort: a port handed out is reserved for this process, never handed out twice, below the ephemeral range', async () => {
  const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()));
  assert.equal(new Set(ports).size, ports.length, 'no port twice');
  const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  for (const p of ports) {
    assert.ok(p >= 10_000 && p < low, `${p} below the ephemeral range (${low})`);
    assert.equal(readFileSync(join(RESERVATIONS, String(p)), 'utf8'), String(process.pid));
  }
  assert.ok(ports.every((p) => reservedPorts().includes(p)));
});

test("freePort: another live process's reservation is skipped, a dead one's taken over, and a process's own are removed at its exit", async () => {
  // A child process reserves ports and exits: its files are gone.
  const script = `const { freePort } = require(${JSON.stringify(join(__dirname, 'ports.js'))}); (async () => { const ps = []; for (let i = 0; i < 5; i++) ps.push(await freePort()); console.log(JSON.stringify(ps)); })();`;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(child.status, 0, child.stderr);
  const childPorts = JSON.parse(child.stdout) as number[];
  assert.equal(childPorts.length, 5);
  for (const p of childPorts) assert.ok(!reservedPorts().includes(p), `the exited child's reservation of ${p} was removed`);

  // One reservation handed to a process that has exited (as if it crashed), one to a live one
  // (this test's parent).
  mkdirSync(RESERVATIONS, { recursive: true });
  const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
  const deadPid = Number(dead.stdout.trim());
  const stale = await freePort();
  writeFileSync(join(RESERVATIONS, String(stale)), String(deadPid));
  const live = process.ppid;
  const other = await freePort();
  writeFileSync(join(RESERVATIONS, String(other)), String(live));
  assert.equal(reservedPorts().includes(stale), true);
  const { reserveForTest } = await import('./ports');
  assert.equal(reserveForTest(other), false, "a live process's reservation is not taken");
  assert.equal(reserveForTest(stale), true, "a dead process's reservation is taken over");
  assert.equal(readFileSync(join(RESERVATIONS, String(stale)), 'utf8'), String(process.pid));
});

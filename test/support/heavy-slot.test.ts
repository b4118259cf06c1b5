/** The heavy slot: two processes take it one after the other; a slot whose owner died is taken over. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

const dir = mkdtempSync(join(tmpdir(), 'gracegate-slot-test-'));
const slot = join(dir, 'slot');
after(() => rmSync(dir, { recursive: true, force: true }));

/** A process that holds the slot for `holdMs` and prints when it got it and let it go. */
function holder(tag: string, holdMs: number): Promise<{ tag: string; inMs: number; outMs: number }> {
  const script = `const { withHeavySlot } = require(${JSON.stringify(join(__dirname, 'heavy-slot.js'))});
withHeavySlot(${JSON.stringify(tag)}, async () => { const inMs = Date.now(); await new Promise((r) => setTimeout(r, ${holdMs})); console.log(JSON.stringify({ inMs, outMs: Date.now() })); });`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], {
      env: { ...process.env, GRACEGATE_HEAVY_SLOT: 'on', GRACEGATE_HEAVY_SLOT_DIR: slot },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('exit', (code) =>
      code === 0 ? resolve({ tag, ...(JSON.parse(out) as { inMs: number; outMs: number }) }) : reject(new Error(`${tag} exited ${code}`)),
    );
  });
}

test('two processes hold the heavy slot one after the other, never together', async () => {
  const [a, b] = await Promise.all([holder('a', 300), holder('b', 300)]);
  const [first, second] = a!.inMs <= b!.inMs ? [a!, b!] : [b!, a!];
  assert.ok(second.inMs >= first.outMs, `${second.tag} got the slot at ${second.inMs}, before ${first.tag} let it go at ${first.outMs}`);
});

test('a slot whose owner is gone is taken over', async () => {
  mkdirSync(slot);
  // A pid no process has: the kernel's pid range tops out far below this.
  writeFileSync(join(slot, 'owner.json'), JSON.stringify({ pid: 2 ** 30, what: 'a dead run' }));
  const r = await holder('c', 10);
  assert.ok(r.outMs >= r.inMs);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLOCK_STEP_MS, wallClock } from '../../src/hc/clock';

// The sidecar's timers, driven by a scripted wall clock and timer queue: no sleeping.

function rig(start: number) {
  let wall = start;
  const queue: Array<{ fn: () => void; ms: number }> = [];
  const clock = wallClock(() => wall, {
    setTimeout: (fn, ms) => {
      const t = { fn, ms };
      queue.push(t);
      return t;
    },
    clearTimeout: (h) => {
      const i = queue.indexOf(h as (typeof queue)[number]);
      if (i >= 0) queue.splice(i, 1);
    },
  });
  return {
    clock,
    queue,
    /** Runs the next timer after moving the wall clock by `wallMs` (what Date.now() would show). */
    fireNext(wallMs: number) {
      wall += wallMs;
      queue.shift()!.fn();
    },
    get wall() {
      return wall;
    },
  };
}

test('a timer that fires a millisecond early by the wall clock is re-armed for the rest', () => {
  const r = rig(1_000);
  const fired: number[] = [];
  r.clock.setTimer(400, () => fired.push(r.wall));
  r.fireNext(399);
  assert.deepEqual(fired, [], 'not at 399 ms');
  assert.equal(r.queue.length, 1);
  assert.equal(r.queue[0]!.ms, 1, 're-armed for the 1 ms left');
  r.fireNext(1);
  assert.deepEqual(fired, [1_400]);
});

test('on time or late fires at once; a wall clock stepped back is not waited out', () => {
  const onTime = rig(0);
  let n = 0;
  onTime.clock.setTimer(50, () => n++);
  onTime.fireNext(60);
  assert.equal(n, 1);

  const stepped = rig(10_000);
  stepped.clock.setTimer(400, () => n++);
  stepped.fireNext(400 - CLOCK_STEP_MS - 5_000);
  assert.equal(n, 2, 'fired: a clock step, not rounding');
});

test('cancel stops a re-armed timer too', () => {
  const r = rig(0);
  let n = 0;
  const cancel = r.clock.setTimer(100, () => n++);
  r.fireNext(99);
  cancel();
  assert.equal(r.queue.length, 0);
  assert.equal(n, 0);
});

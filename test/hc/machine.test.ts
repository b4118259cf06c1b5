/** The drain controller with an injected clock and a fake Envoy: no sleeping, no sockets. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HcMachine, NO_WITNESS_REASON } from '../../src/hc/machine';
import { DISPLACED_REASON, MAX_WAITERS, MAX_WAITERS_PER_SOURCE } from '../../src/hc/waiters';
import { memoryStateStore } from '../../src/hc/state-file';
import { DRAIN_IRREVERSIBLE } from '../../src/hc/transitions';
import type { HcConfigInput } from '../../src/contract/hc-config';
import type { StateStore } from '../../src/hc/types';
import { TERMINATION_EVENTS, terminationEvent, type EventId, type RefusedBody } from '../../src/contract/hc';
import { FakeClock, FakeEnvoy, collectingLogger, flush, testConfig } from './fakes';

const S = 1000;

async function openMachine(input: HcConfigInput = {}, store: StateStore = memoryStateStore()) {
  const clock = new FakeClock();
  const envoy = new FakeEnvoy();
  const { lines, log } = collectingLogger();
  const config = testConfig({ lbBufferSeconds: 10, drainTimeoutSeconds: 60, pollIntervalSeconds: 1, ...input });
  const machine = new HcMachine({ config, clock, envoy, store, log });
  machine.start();
  await clock.advance(0);
  return { clock, envoy, machine, lines, store };
}

const answers = (m: HcMachine) => ({ lb: m.health().lb, ready: m.health().readiness, live: m.health().liveness });
const at = (m: HcMachine, id: EventId) => m.context.events[terminationEvent(id).key]?.at ?? null;

describe('start-up', () => {
  test('starts in FAULT and goes OPEN on the first LIVE answer from Envoy', async () => {
    const clock = new FakeClock();
    const envoy = new FakeEnvoy();
    envoy.ready = 'PRE_INITIALIZING';
    const machine = new HcMachine({ config: testConfig(), clock, envoy, store: memoryStateStore(), log: () => {} });
    machine.start();
    assert.equal(machine.state, 'FAULT');
    assert.deepEqual(machine.health().lb, { status: 503, body: 'FAULT' });
    await clock.advance(0);
    assert.equal(machine.state, 'FAULT', 'PRE_INITIALIZING is not LIVE');
    assert.match(machine.context.reason, /PRE_INITIALIZING/);
    envoy.ready = 'LIVE';
    await clock.advance(1 * S);
    assert.equal(machine.state, 'OPEN');
    assert.deepEqual(answers(machine), { lb: { status: 200, body: 'OPEN' }, ready: { status: 200, body: 'OPEN' }, live: { status: 200, body: 'OPEN' } });
    machine.stop();
  });
});

describe('the start hold (WARMING)', () => {
  const hold = { startHold: { afterReadiness: true, seconds: 2 } };

  test('Envoy LIVE but still warming a listener: FAULT says what it waits for; serving, WARMING', async () => {
    const clock = new FakeClock();
    const envoy = new FakeEnvoy();
    envoy.served = 'Envoy does not serve its configuration yet: listener_manager.total_listeners_warming 1';
    const machine = new HcMachine({ config: testConfig(hold), clock, envoy, store: memoryStateStore(), log: () => {} });
    machine.start();
    await clock.advance(0);
    assert.equal(machine.state, 'FAULT', 'LIVE is not enough: a listener waits for its routes (istio/istio#19980)');
    assert.match(machine.context.reason, /total_listeners_warming 1/);
    assert.deepEqual(machine.health().readiness.status, 503);
    envoy.served = null;
    await clock.advance(1 * S);
    assert.equal(machine.state, 'WARMING');
    assert.deepEqual(answers(machine), {
      lb: { status: 503, body: 'WARMING' },
      ready: { status: 200, body: 'WARMING' },
      live: { status: 200, body: 'WARMING' },
    });
    machine.stop();
  });

  test("the LB's first 200 comes startHold.seconds after the kubelet's first readiness probe answered, not before", async () => {
    const { clock, machine, lines } = await openMachine(hold);
    assert.equal(machine.state, 'WARMING');
    await clock.advance(30 * S);
    assert.equal(machine.state, 'WARMING', 'no readiness probe yet: the hold has nothing to count from');
    machine.readinessProbed('10.244.1.1');
    assert.ok(lines.some((l) => l.msg === "the kubelet's readiness probe was answered 200"));
    await clock.advance(1.9 * S);
    machine.readinessProbed('10.244.1.1');
    await clock.advance(0.09 * S);
    assert.equal(machine.state, 'WARMING', 'a later probe does not move the start');
    await clock.advance(0.01 * S);
    assert.equal(machine.state, 'OPEN');
    assert.deepEqual(machine.health().lb, { status: 200, body: 'OPEN' });
    assert.deepEqual(
      machine.context.history.map((h) => h.state),
      ['FAULT', 'WARMING', 'OPEN'],
    );
    machine.stop();
  });

  test('without afterReadiness the hold counts from WARMING; with neither, OPEN at once', async () => {
    const timed = await openMachine({ startHold: { afterReadiness: false, seconds: 3 } });
    assert.equal(timed.machine.state, 'WARMING');
    await timed.clock.advance(3 * S);
    assert.equal(timed.machine.state, 'OPEN');
    timed.machine.stop();
    const plain = await openMachine();
    assert.equal(plain.machine.state, 'OPEN');
    plain.machine.stop();
  });

  test('a fault in WARMING, then Envoy back: WARMING again, and the hold waits for a new readiness probe', async () => {
    const { clock, envoy, machine } = await openMachine({ ...hold, faultAfterFailures: 1 });
    machine.readinessProbed('10.244.1.1');
    envoy.ready = new Error('admin down');
    await clock.advance(1 * S);
    assert.equal(machine.state, 'FAULT');
    envoy.ready = 'LIVE';
    await clock.advance(1 * S);
    assert.equal(machine.state, 'WARMING');
    await clock.advance(10 * S);
    assert.equal(machine.state, 'WARMING', 'the readiness probe of the earlier WARMING does not count');
    machine.readinessProbed('10.244.1.1');
    await clock.advance(2 * S);
    assert.equal(machine.state, 'OPEN');
    machine.stop();
  });

  test('a drain in WARMING runs the sequence as from OPEN, and the hold no longer leads to OPEN', async () => {
    const { clock, envoy, machine } = await openMachine({ ...hold, sequence: 'health-first' });
    machine.readinessProbed('10.244.1.1');
    envoy.count = 0;
    assert.equal((await machine.requestDrain({ witness: false })).status, 202);
    assert.equal(machine.state, 'CLOSING');
    await clock.advance(2 * S);
    assert.notEqual(machine.state, 'OPEN');
    await clock.advance(20 * S);
    assert.equal(machine.state, 'CLOSED');
    machine.stop();
  });
});

describe('drain-first', () => {
  test('keeps 200 while draining, 503 at zero, readiness one LB buffer later', async () => {
    const { clock, envoy, machine } = await openMachine({ sequence: 'drain-first' });
    envoy.count = 3;
    const answer = await machine.requestDrain({ witness: false });
    assert.equal(answer.status, 202);
    assert.equal(answer.json['draining'], true);
    assert.equal(machine.state, 'DRAINING');
    await clock.advance(0);
    assert.deepEqual(envoy.calls.slice(-2), ['drain', 'stats'], 'the proxy drain goes out at once, then counting');
    assert.deepEqual(answers(machine).lb, { status: 200, body: 'DRAINING' });
    assert.deepEqual(answers(machine).ready, { status: 200, body: 'DRAINING' });
    await clock.advance(5 * S);
    assert.equal(machine.state, 'DRAINING', 'in-flight is still 3');
    assert.equal(machine.inFlight, 3);
    envoy.count = 0;
    await clock.advance(1 * S);
    assert.equal(machine.state, 'CLOSING');
    assert.deepEqual(answers(machine).lb, { status: 503, body: 'CLOSING' });
    assert.deepEqual(answers(machine).ready, { status: 200, body: 'CLOSING' });
    await clock.advance(9.9 * S);
    assert.equal(machine.state, 'CLOSING');
    await clock.advance(0.1 * S);
    assert.equal(machine.state, 'CLOSED');
    assert.deepEqual(answers(machine), { lb: { status: 503, body: 'CLOSED' }, ready: { status: 503, body: 'CLOSED' }, live: { status: 200, body: 'CLOSED' } });
    const [e1, e2, e3, e4, e5] = ([1, 2, 3, 4, 5] as const).map((i) => at(machine, i)!);
    assert.ok(e3 < e4 && e4 === e1 && e1 < e2, `[3] < [4] = [1] < [2]: ${[e1, e2, e3, e4]}`);
    assert.equal(e2! - e1!, 10 * S);
    assert.equal(e5, e1! + 10 * S);
    assert.equal(machine.context.events.lbMarksDown!.estimated, true);
    assert.equal(machine.context.events.lbResetsSessions!.estimated, true);
    machine.stop();
  });

  test('the drain timeout ends the wait, is logged and counted', async () => {
    const { clock, envoy, machine, lines } = await openMachine({ sequence: 'drain-first', drainTimeoutSeconds: 30 });
    envoy.count = 7;
    await machine.requestDrain({ witness: false });
    await clock.advance(29 * S);
    assert.equal(machine.state, 'DRAINING');
    await clock.advance(1 * S);
    assert.equal(machine.state, 'CLOSING');
    assert.equal(machine.context.drainTimedOut, true);
    assert.equal(machine.counters.drainTimeouts, 1);
    assert.match(machine.context.events.inFlightZero!.note!, /drain timeout: 7 still in flight/);
    assert.ok(lines.some((l) => l.level === 'warn' && /drain timeout/.test(l.msg)));
    machine.stop();
  });
});

describe('health-first', () => {
  test('503 at once, the proxy drain after the LB buffer, readiness at zero', async () => {
    const { clock, envoy, machine } = await openMachine({ sequence: 'health-first' });
    envoy.count = 2;
    await machine.requestDrain({ witness: false });
    assert.equal(machine.state, 'CLOSING');
    assert.deepEqual(answers(machine).lb, { status: 503, body: 'CLOSING' });
    assert.deepEqual(answers(machine).ready, { status: 200, body: 'CLOSING' });
    await clock.advance(9.9 * S);
    assert.ok(!envoy.calls.includes('drain'), 'no proxy drain before the LB buffer');
    await clock.advance(0.1 * S);
    assert.equal(machine.state, 'DRAINING');
    assert.ok(envoy.calls.includes('drain'));
    assert.deepEqual(answers(machine).lb, { status: 503, body: 'DRAINING' });
    assert.deepEqual(answers(machine).ready, { status: 200, body: 'DRAINING' });
    envoy.count = 0;
    await clock.advance(1 * S);
    assert.equal(machine.state, 'CLOSED');
    assert.deepEqual(answers(machine).ready, { status: 503, body: 'CLOSED' });
    const [e1, e2, e3, e4] = ([1, 2, 3, 4] as const).map((i) => at(machine, i)!);
    assert.ok(e1 < e3 && e3 < e4 && e4 === e2, `[1] < [3] < [4] = [2]: ${[e1, e2, e3, e4]}`);
    assert.equal(e3! - e1!, 10 * S);
    machine.stop();
  });

  test('/reopen before the proxy drain reopens; after it, 409 with the reason', async () => {
    const { clock, envoy, machine } = await openMachine({ sequence: 'health-first' });
    await machine.requestDrain({ witness: false });
    const reopened = machine.step('reopen');
    assert.equal(reopened.status, 200);
    assert.equal(machine.state, 'OPEN');
    assert.deepEqual(machine.health().lb, { status: 200, body: 'OPEN' });
    assert.deepEqual(
      machine.context.events,
      { lbHealthFails: null, readinessFails: null, proxyDrainStarts: null, inFlightZero: null, lbMarksDown: null, lbResetsSessions: null },
      'a reopen forgets the aborted sequence',
    );
    await clock.advance(30 * S);
    assert.ok(!envoy.calls.includes('drain'), 'the cancelled buffer timer never fires');
    envoy.count = 1;
    await machine.requestDrain({ witness: false });
    await clock.advance(10 * S);
    assert.equal(machine.state, 'DRAINING');
    const refused = machine.step('reopen');
    assert.equal(refused.status, 409);
    assert.equal((refused.json as RefusedBody).reason, DRAIN_IRREVERSIBLE);
    assert.equal(machine.state, 'DRAINING');
    assert.equal(machine.counters.refusedEvents, 1);
    machine.stop();
  });
});

describe('soft-drain', () => {
  test('the soft status (and body) first, 503 and readiness at zero', async () => {
    const { clock, envoy, machine } = await openMachine({ sequence: 'soft-drain', softSignal: { status: 404, body: 'TROFS' } });
    envoy.count = 1;
    await machine.requestDrain({ witness: false });
    assert.equal(machine.state, 'CLOSING');
    assert.deepEqual(machine.health().lb, { status: 404, body: 'TROFS' });
    await clock.advance(10 * S);
    assert.equal(machine.state, 'DRAINING');
    assert.deepEqual(machine.health().lb, { status: 404, body: 'TROFS' });
    envoy.count = 0;
    await clock.advance(1 * S);
    assert.equal(machine.state, 'CLOSED');
    assert.deepEqual(answers(machine).lb, { status: 503, body: 'CLOSED' });
    assert.deepEqual(answers(machine).ready, { status: 503, body: 'CLOSED' });
    assert.equal(machine.context.events.lbHealthFails!.note, 'soft signal 404');
    assert.equal(at(machine, 5), at(machine, 4)! + 10 * S, '[5] is expected one LB buffer after the hard 503');
    machine.stop();
  });
});

describe('FAULT', () => {
  test('N consecutive failures make FAULT (LB and readiness 503, liveness 200); recovery reopens when no sequence started', async () => {
    const { clock, envoy, machine } = await openMachine({ faultAfterFailures: 3 });
    envoy.ready = new Error('GET /ready: connect ECONNREFUSED');
    await clock.advance(2 * S);
    assert.equal(machine.state, 'OPEN', 'two failures are not yet a fault');
    await clock.advance(1 * S);
    assert.equal(machine.state, 'FAULT');
    assert.deepEqual(answers(machine), { lb: { status: 503, body: 'FAULT' }, ready: { status: 503, body: 'FAULT' }, live: { status: 200, body: 'FAULT' } });
    assert.match(machine.context.reason, /ECONNREFUSED \(\d+ consecutive failed polls\)/);
    envoy.ready = 'LIVE';
    await clock.advance(1 * S);
    assert.equal(machine.state, 'OPEN');
    machine.stop();
  });

  test('a fault during a drain never returns to OPEN; the sequence still finishes', async () => {
    const { clock, envoy, machine } = await openMachine({ sequence: 'drain-first', faultAfterFailures: 2 });
    envoy.count = 4;
    await machine.requestDrain({ witness: false });
    await flush();
    envoy.count = new Error('GET /stats: no answer within 1000ms');
    await clock.advance(2 * S);
    assert.equal(machine.state, 'FAULT');
    assert.equal(machine.context.events.lbHealthFails!.note?.startsWith('FAULT'), true, '[1] records that the LB saw 503 because of the fault');
    envoy.count = 2;
    await clock.advance(1 * S);
    assert.equal(machine.state, 'FAULT', 'Envoy answering again does not undo a started drain');
    envoy.count = 0;
    await clock.advance(1 * S);
    assert.equal(machine.state, 'CLOSED');
    machine.stop();
  });

  test('Envoy /ready DRAINING while OPEN (someone else drained it) is a fault', async () => {
    const { clock, envoy, machine } = await openMachine({ faultAfterFailures: 1 });
    envoy.ready = 'DRAINING';
    await clock.advance(1 * S);
    assert.equal(machine.state, 'FAULT');
    assert.match(machine.context.reason, /DRAINING/);
    machine.stop();
  });

  test('a failed drain_listeners call is retried and counting waits for it', async () => {
    const { clock, envoy, machine } = await openMachine({ sequence: 'drain-first', faultAfterFailures: 5 });
    envoy.drainError = new Error('POST /drain_listeners: HTTP 500');
    envoy.count = 0;
    await machine.requestDrain({ witness: false });
    await clock.advance(2 * S);
    assert.equal(machine.state, 'DRAINING', 'no zero is believed before Envoy accepted the drain');
    assert.ok(machine.counters.drainCallErrors >= 2);
    envoy.drainError = undefined;
    await clock.advance(1 * S);
    assert.equal(machine.state, 'CLOSING');
    machine.stop();
  });
});

describe('termination witness', () => {
  test('without a witness, /drain waits the window and then declines; the pod keeps serving', async () => {
    const { clock, envoy, machine } = await openMachine({ terminationWitness: { required: true, windowSeconds: 10 } });
    let settled = false;
    const pending = machine.requestDrain({ witness: true }).then((a) => ((settled = true), a));
    await clock.advance(9 * S);
    assert.equal(settled, false);
    await clock.advance(1 * S);
    const answer = await pending;
    assert.equal(answer.status, 200);
    assert.equal(answer.json['draining'], false);
    assert.equal(answer.json['reason'], NO_WITNESS_REASON);
    assert.equal(machine.state, 'OPEN');
    assert.deepEqual(machine.health().lb, { status: 200, body: 'OPEN' });
    assert.ok(!envoy.calls.includes('drain'));
    machine.stop();
  });

  test('a waiter arriving within the window starts the sequence and is released at CLOSED', async () => {
    const { clock, envoy, machine } = await openMachine({ sequence: 'health-first', terminationWitness: { required: true, windowSeconds: 10 } });
    const pending = machine.requestDrain({ witness: true });
    await clock.advance(3 * S);
    assert.equal(machine.state, 'OPEN');
    const wait = machine.waitClosed();
    const answer = await pending;
    assert.equal(answer.status, 202);
    assert.equal(machine.state, 'CLOSING');
    let released: { status: number; body: string } | undefined;
    void wait.answer.then((a) => (released = a));
    envoy.count = 0;
    await clock.advance(10 * S);
    await clock.advance(1 * S);
    assert.equal(machine.state, 'CLOSED');
    assert.deepEqual(released, { status: 200, body: 'CLOSED' });
    machine.stop();
  });

  test('a waiter already present witnesses at once; a waiter alone changes nothing', async () => {
    const { clock, machine } = await openMachine({ sequence: 'drain-first' });
    const wait = machine.waitClosed();
    await clock.advance(60 * S);
    assert.equal(machine.state, 'OPEN', '/wait-closed alone never starts anything');
    const answer = await machine.requestDrain({ witness: true });
    assert.equal(answer.status, 202);
    assert.equal(machine.state, 'DRAINING');
    wait.cancel();
    machine.stop();
  });

  test('/wait-closed answers 504 at its bound when the sequence never finishes', async () => {
    const { clock, machine } = await openMachine({ lbBufferSeconds: 1, drainTimeoutSeconds: 5, terminationWitness: { windowSeconds: 2 } });
    const wait = machine.waitClosed();
    let result: { status: number; body: string } | undefined;
    void wait.answer.then((a) => (result = a));
    await clock.advance((2 + 2 + 5) * S);
    assert.equal(result, undefined);
    await clock.advance(5 * S);
    assert.deepEqual(result, { status: 504, body: 'OPEN' });
    assert.equal(machine.waiterCount, 0);
    machine.stop();
  });

  test("a full set of waiters never refuses a new one: the heaviest source, or the newcomer's own oldest, is displaced", async () => {
    const { machine } = await openMachine({ sequence: 'drain-first' });
    const answers: Array<{ source: string; result?: { status: number; body: string } }> = [];
    const wait = (source: string) => {
      const entry: (typeof answers)[number] = { source };
      void machine.waitClosed(source).answer.then((a) => (entry.result = a));
      answers.push(entry);
    };
    // One source beyond its share displaces its own oldest.
    for (let i = 0; i < MAX_WAITERS_PER_SOURCE + 2; i++) wait('10.0.0.9');
    await flush();
    assert.equal(machine.waiterCount, MAX_WAITERS_PER_SOURCE);
    assert.deepEqual(
      answers.slice(0, 2).map((a) => a.result),
      [
        { status: 503, body: `OPEN: ${DISPLACED_REASON}` },
        { status: 503, body: `OPEN: ${DISPLACED_REASON}` },
      ],
    );
    // Many sources up to the total; the kubelet's hook (one waiter, a new source) still waits.
    for (let s = 0; machine.waiterCount < MAX_WAITERS; s++) wait(`10.0.1.${s}`);
    wait('10.0.2.1');
    await flush();
    assert.equal(machine.waiterCount, MAX_WAITERS);
    assert.equal(answers.at(-1)!.result, undefined, 'the newest waiter is kept');
    assert.equal(answers.filter((a) => a.source === '10.0.0.9' && a.result === undefined).length, MAX_WAITERS_PER_SOURCE - 1, 'the heaviest source paid');
    assert.equal(machine.counters.displacedWaiters, 3);
    const answer = await machine.requestDrain({ witness: true });
    assert.equal(answer.status, 202, 'the waiters witness the termination');
    machine.stop();
  });

  test('?witness=none (witness: false) drains at once', async () => {
    const { machine } = await openMachine({ sequence: 'drain-first' });
    const answer = await machine.requestDrain({ witness: false });
    assert.equal(answer.status, 202);
    assert.equal(machine.state, 'DRAINING');
    const again = await machine.requestDrain({ witness: true });
    assert.equal(again.status, 200, 'idempotent: no second witness wait');
    assert.equal(again.json['draining'], true);
    machine.stop();
  });
});

describe('GET /state', () => {
  test('the body follows the contract: the six events by id and wire name, and when Envoy acknowledged the drain', async () => {
    const { clock, envoy, machine } = await openMachine({ sequence: 'drain-first' });
    envoy.count = 1;
    const before = machine.snapshot();
    assert.equal(before.drainAckedAt, null);
    assert.deepEqual(
      before.events.map((e) => [e.id, e.name, e.at]),
      TERMINATION_EVENTS.map((e) => [e.id, e.name, null]),
    );
    await machine.requestDrain({ witness: false });
    await clock.advance(0);
    const draining = machine.snapshot();
    assert.equal(draining.drainAckedAt, new Date(clock.now()).toISOString());
    assert.equal(draining.proxyDrained, true);
    assert.equal(draining.events[2]!.name, 'proxy-drain-starts');
    assert.equal(draining.events[2]!.at, draining.drainAckedAt);
    assert.equal(draining.finished, false);
    machine.stop();
  });
});

describe('restart', () => {
  test('resumes CLOSING from the state file and keeps the original timeline', async () => {
    const store = memoryStateStore();
    const first = await openMachine({ sequence: 'health-first' }, store);
    await first.machine.requestDrain({ witness: false });
    const closingAt = first.clock.now();
    await first.clock.advance(3 * S);
    first.machine.stop();

    const clock = new FakeClock(closingAt + 4 * S);
    const envoy = new FakeEnvoy();
    envoy.count = 1;
    const machine = new HcMachine({
      config: testConfig({ sequence: 'health-first', lbBufferSeconds: 10, drainTimeoutSeconds: 60 }),
      clock,
      envoy,
      store,
      log: () => {},
    });
    machine.start();
    assert.equal(machine.state, 'CLOSING', 'the first answer after a restart is the resumed state');
    assert.deepEqual(machine.health().lb, { status: 503, body: 'CLOSING' });
    await clock.advance(5.9 * S);
    assert.equal(machine.state, 'CLOSING');
    await clock.advance(0.1 * S);
    assert.equal(machine.state, 'DRAINING', 'the buffer ends 10 s after the original [1], not 10 s after the restart');
    assert.equal(at(machine, 3), closingAt + 10 * S);
    envoy.count = 0;
    await clock.advance(1 * S);
    assert.equal(machine.state, 'CLOSED');
    machine.stop();
  });

  test('resumes DRAINING: re-sends a drain Envoy never acknowledged, keeps the original deadline', async () => {
    const store = memoryStateStore();
    const first = await openMachine({ sequence: 'drain-first', drainTimeoutSeconds: 20 }, store);
    first.envoy.count = 5;
    first.envoy.drainError = new Error('POST /drain_listeners?graceful: no answer within 1000ms');
    await first.machine.requestDrain({ witness: false });
    const drainAt = first.clock.now();
    first.machine.stop();

    const clock = new FakeClock(drainAt + 15 * S);
    const envoy = new FakeEnvoy();
    envoy.count = 5;
    const machine = new HcMachine({
      config: testConfig({ sequence: 'drain-first', drainTimeoutSeconds: 20, lbBufferSeconds: 10 }),
      clock,
      envoy,
      store,
      log: () => {},
    });
    machine.start();
    assert.equal(machine.state, 'DRAINING');
    await clock.advance(0);
    assert.deepEqual(envoy.calls.slice(0, 2), ['drain', 'stats']);
    await clock.advance(5 * S);
    assert.equal(machine.state, 'CLOSING', 'deadline = original [3] + drainTimeout');
    assert.equal(machine.context.drainTimedOut, true);
    machine.stop();
  });

  test('an OPEN state file starts fresh (FAULT until Envoy is LIVE)', async () => {
    const store = memoryStateStore();
    const first = await openMachine({}, store);
    first.machine.stop();
    const clock = new FakeClock();
    const machine = new HcMachine({ config: testConfig(), clock, envoy: new FakeEnvoy(), store, log: () => {} });
    machine.start();
    assert.equal(machine.state, 'FAULT');
    await clock.advance(0);
    assert.equal(machine.state, 'OPEN');
    machine.stop();
  });
});

describe('manual steps', () => {
  test('/close-lb holds CLOSING without timers; /drain then waits what is left of the LB buffer', async () => {
    const { clock, envoy, machine } = await openMachine({ sequence: 'drain-first' });
    envoy.count = 1;
    assert.equal(machine.step('close-lb').status, 200);
    assert.equal(machine.state, 'CLOSING');
    assert.deepEqual(machine.health().lb, { status: 503, body: 'CLOSING' });
    await clock.advance(6 * S);
    assert.equal(machine.state, 'CLOSING');
    assert.ok(!envoy.calls.includes('drain'));
    await machine.requestDrain({ witness: false });
    await clock.advance(3.9 * S);
    assert.equal(machine.state, 'CLOSING');
    await clock.advance(0.1 * S);
    assert.equal(machine.state, 'DRAINING');
    envoy.count = 0;
    await clock.advance(1 * S);
    assert.equal(machine.state, 'CLOSED');
    machine.stop();
  });

  test('/close drains the proxy now and closes at zero; illegal events are 409 and counted', async () => {
    const { clock, envoy, machine, lines } = await openMachine({ sequence: 'drain-first' });
    envoy.count = 1;
    assert.equal(machine.step('close').status, 200);
    assert.equal(machine.state, 'DRAINING');
    assert.deepEqual(machine.health().lb, { status: 503, body: 'DRAINING' }, 'a manual close fails the LB at once');
    const refused = machine.step('close-lb');
    assert.equal(refused.status, 200, 'close-lb while the LB already fails is a no-op');
    envoy.count = 0;
    await clock.advance(1 * S);
    assert.equal(machine.state, 'CLOSED');
    const illegal = machine.step('reopen');
    assert.equal(illegal.status, 409);
    assert.equal(machine.counters.refusedEvents, 1);
    assert.ok(lines.some((l) => l.msg === "refused 'reopen'"));
    machine.stop();
  });
});

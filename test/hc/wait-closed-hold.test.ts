/**
 * The proxy hold, tested as a hold: istio-proxy's preStop (GET /wait-closed) must stay pending
 * through DRAINING and CLOSING and resolve only when the machine enters CLOSED, in every sequence.
 * Released any earlier, the kubelet would SIGTERM the proxy while the sequence still needs it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HcMachine } from '../../src/hc/machine';
import { memoryStateStore } from '../../src/hc/state-file';
import { SEQUENCES } from '../../src/hc/states';
import { FakeClock, FakeEnvoy, testConfig } from './fakes';

const STEP_MS = 100;

for (const sequence of SEQUENCES) {
  test(`${sequence}: /wait-closed is pending in every state before CLOSED and resolves when CLOSED is entered`, async () => {
    const clock = new FakeClock();
    const envoy = new FakeEnvoy();
    // LB buffer 1 s, in-flight 3 until 2.5 s after the start, polled every 0.1 s.
    const machine = new HcMachine({
      config: testConfig({ sequence, lbBufferSeconds: 1, drainTimeoutSeconds: 10, pollIntervalSeconds: 0.1 }),
      clock,
      envoy,
      store: memoryStateStore(),
      log: () => {},
    });
    machine.start();
    await clock.advance(0);
    assert.equal(machine.state, 'OPEN');
    envoy.count = 3;
    const wait = machine.waitClosed()!;
    let resolvedAt: number | undefined;
    let answer: { status: number; body: string } | undefined;
    void wait.answer.then((a) => {
      resolvedAt = clock.now();
      answer = a;
    });
    const started = clock.now();
    const state = (): string => machine.state;
    assert.equal((await machine.requestDrain({ witness: true })).status, 202);
    const seen = new Set<string>();
    for (let t = 0; t <= 6000 && state() !== 'CLOSED'; t += STEP_MS) {
      seen.add(state());
      assert.equal(resolvedAt, undefined, `/wait-closed resolved at +${(resolvedAt ?? 0) - started} ms while the machine was ${state()}`);
      if (t === 2500) envoy.count = 0;
      await clock.advance(STEP_MS);
    }
    assert.equal(state(), 'CLOSED');
    assert.deepEqual([...seen].sort(), ['CLOSING', 'DRAINING'], 'the hold was held through both waiting states');
    assert.deepEqual(answer, { status: 200, body: 'CLOSED' });
    const closedAt = machine.context.history.find((h) => h.state === 'CLOSED')!.at;
    assert.equal(resolvedAt, closedAt, 'released at the instant CLOSED was entered');
    // By hand: drain-first drains at 0, sees 0 on the first poll after 2.5 s (2.6 s), then waits the
    // 1 s buffer; the other two wait the buffer first (drain at 1 s) and close at that same poll.
    assert.equal(closedAt - started, sequence === 'drain-first' ? 3600 : 2600);
    machine.stop();
  });
}

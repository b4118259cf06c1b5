/** The transition table as data: what is reachable, what is refused, and why. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { statesWhere } from '../../src/contract/hc';
import { EVENTS, STATES, type Flow } from '../../src/hc/states';
import { DRAIN_IRREVERSIBLE, TRANSITIONS, transition } from '../../src/hc/transitions';

const FLOWS: Flow[] = ['drain-first', 'health-first', 'soft-drain', 'manual'];
const none = { proxyDrained: false, sequenceStarted: false };
const drained = { proxyDrained: true, sequenceStarted: true };

test('every flow has a row for every state', () => {
  for (const flow of FLOWS) assert.deepEqual(Object.keys(TRANSITIONS[flow]).sort(), [...STATES].sort());
});

test('a finished state (CLOSED) is final: no event leaves it', () => {
  assert.deepEqual(
    statesWhere((f) => f.finished),
    ['CLOSED'],
  );
  for (const state of statesWhere((f) => f.finished)) {
    for (const flow of FLOWS) {
      for (const event of EVENTS) {
        const r = transition(flow, state, event, drained);
        if (r.ok) assert.equal(r.to, state, `${flow} ${state} × ${event}`);
      }
    }
  }
});

test('nothing reaches OPEN once the proxy drain may have reached Envoy', () => {
  for (const flow of FLOWS) {
    for (const state of STATES) {
      for (const event of EVENTS) {
        const r = transition(flow, state, event, drained);
        if (r.ok && state !== 'OPEN') assert.notEqual(r.to, 'OPEN', `${flow} ${state} × ${event}`);
      }
    }
  }
});

test('the first step of each sequence', () => {
  assert.deepEqual(transition('drain-first', 'OPEN', 'drain', none), { ok: true, to: 'DRAINING', changed: true });
  assert.deepEqual(transition('health-first', 'OPEN', 'drain', none), { ok: true, to: 'CLOSING', changed: true });
  assert.deepEqual(transition('soft-drain', 'OPEN', 'drain', none), { ok: true, to: 'CLOSING', changed: true });
  assert.deepEqual(transition('drain-first', 'DRAINING', 'zero', drained), { ok: true, to: 'CLOSING', changed: true });
  assert.deepEqual(transition('health-first', 'DRAINING', 'zero', drained), { ok: true, to: 'CLOSED', changed: true });
});

test('a repeated /drain is an idempotent self-transition', () => {
  for (const flow of ['drain-first', 'health-first', 'soft-drain'] as const) {
    for (const state of ['DRAINING', 'CLOSING', 'CLOSED', 'FAULT'] as const) {
      const r = transition(flow, state, 'drain', drained);
      assert.ok(r.ok && !r.changed, `${flow} ${state} × drain`);
    }
  }
});

test('refusals carry a reason', () => {
  assert.deepEqual(transition('drain-first', 'DRAINING', 'reopen', drained), { ok: false, reason: DRAIN_IRREVERSIBLE });
  assert.deepEqual(transition('drain-first', 'CLOSING', 'reopen', drained), { ok: false, reason: DRAIN_IRREVERSIBLE });
  const reopenFault = transition('health-first', 'FAULT', 'reopen', none);
  assert.ok(!reopenFault.ok && /FAULT ends by itself/.test(reopenFault.reason));
  const okAfterDrain = transition('health-first', 'FAULT', 'envoy-ok', drained);
  assert.ok(!okAfterDrain.ok && /never with OPEN/.test(okAfterDrain.reason));
  const closeLbDraining = transition('drain-first', 'DRAINING', 'close-lb', drained);
  assert.ok(!closeLbDraining.ok && closeLbDraining.reason === "'close-lb' is not allowed in DRAINING (drain-first flow)");
});

test('FAULT returns to WARMING (the start hold) only when no sequence started', () => {
  assert.deepEqual(transition('health-first', 'FAULT', 'envoy-ok', none), { ok: true, to: 'WARMING', changed: true });
  assert.equal(transition('health-first', 'FAULT', 'envoy-ok', { proxyDrained: false, sequenceStarted: true }).ok, false);
});

test('WARMING: the readiness probe noted in place, OPEN at the hold, a drain or a fault as from OPEN', () => {
  for (const flow of FLOWS) {
    assert.deepEqual(transition(flow, 'WARMING', 'readiness-seen', none), { ok: true, to: 'WARMING', changed: false }, flow);
    assert.deepEqual(transition(flow, 'WARMING', 'warmed', none), { ok: true, to: 'OPEN', changed: true }, flow);
    assert.deepEqual(transition(flow, 'WARMING', 'envoy-fault', none), { ok: true, to: 'FAULT', changed: true }, flow);
    for (const event of ['drain', 'close-lb', 'close'] as const)
      assert.deepEqual(transition(flow, 'WARMING', event, none), transition(flow, 'OPEN', event, none), `${flow} ${event}`);
    // Nothing but the hold leads out of WARMING to OPEN, and OPEN never goes back to it.
    for (const event of EVENTS) {
      const r = transition(flow, 'WARMING', event, none);
      if (r.ok && r.to === 'OPEN') assert.equal(event, 'warmed', `${flow} WARMING × ${event}`);
      const fromOpen = transition(flow, 'OPEN', event, none);
      if (fromOpen.ok) assert.notEqual(fromOpen.to, 'WARMING', `${flow} OPEN × ${event}`);
    }
  }
  assert.equal(transition('drain-first', 'WARMING', 'warmed', drained).ok, false);
});

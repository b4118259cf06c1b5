import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PersistedState } from '../../src/hc/types';
import { withLoggedTransitions, type LogLine } from './cluster/witnesses';

const line = (time: string, msg: string, reason: string): LogLine => ({
  atMs: Date.parse(time),
  stream: 'stdout',
  text: JSON.stringify({ time, level: 'info', msg, reason, flow: 'soft-drain' }),
});

/** A time on the minute of the fixtures: `t('39.030')`. */
const t = (s: string) => Date.parse(`2026-12-01T23:05:${s}Z`);

/** A copied state file: its history as given, its state the last entry's; `events` only when given. */
function copiedState(history: Array<[state: string, at: string, reason: string]>, events?: Record<string, unknown>): PersistedState {
  const entries = history.map(([state, at, reason]) => ({ state, at: t(at), reason }));
  const last = entries.at(-1)!;
  return { state: last.state, enteredAt: last.at, reason: last.reason, history: entries, ...(events ? { events } : {}) } as unknown as PersistedState;
}

test("the cluster's sidecar witness: transitions the hc logged after the last copy of its state file are added, in order, and only those", () => {
  const copied = copiedState([
    ['OPEN', '18.790', 'Envoy admin answers LIVE'],
    ['CLOSING', '34.030', 'drain requested, pod termination witnessed'],
    ['DRAINING', '39.030', 'LB buffer of 5s elapsed'],
  ]);
  const log = [
    line('2026-12-01T23:05:34.030Z', 'OPEN -> CLOSING', 'drain requested, pod termination witnessed'),
    line('2026-12-01T23:05:39.030Z', 'CLOSING -> DRAINING', 'LB buffer of 5s elapsed'),
    line('2026-12-01T23:05:39.038Z', 'Envoy drained: /drain_listeners, /drain_listeners?graceful answered 200', ''),
    line('2026-12-01T23:05:39.065Z', 'DRAINING -> CLOSED', 'in-flight reached 0'),
  ];
  const merged = withLoggedTransitions(copied, log)!;
  assert.equal(merged.state, 'CLOSED');
  assert.deepEqual(
    merged.history.map((h) => [h.state, h.at]),
    [
      ['OPEN', t('18.790')],
      ['CLOSING', t('34.030')],
      ['DRAINING', t('39.030')],
      ['CLOSED', t('39.065')],
    ],
  );
  assert.equal(copied.state, 'DRAINING', 'the copy itself is left as it was');
  // A log line that does not follow the state (another pod's, a restart's) is not taken.
  assert.equal(withLoggedTransitions(copied, [line('2026-12-01T23:05:40.000Z', 'OPEN -> CLOSING', 'x')])!.state, 'DRAINING');
  assert.equal(withLoggedTransitions(undefined, log), undefined, 'no state file, nothing made up');
});

test('the events the copy missed with those transitions: [3] as the hc entered DRAINING, [4] as in-flight 0 ended it; one the copy has stands', () => {
  const none = { lbHealthFails: null, readinessFails: null, proxyDrainStarts: null, inFlightZero: null, lbMarksDown: null, lbResetsSessions: null };
  const copied = copiedState(
    [
      ['OPEN', '18.790', 'Envoy admin answers LIVE'],
      ['CLOSING', '34.030', 'drain requested, pod termination witnessed'],
    ],
    { ...none, lbHealthFails: { at: t('34.030'), estimated: false } },
  );
  const log = [
    line('2026-12-01T23:05:39.030Z', 'CLOSING -> DRAINING', 'LB buffer of 5s elapsed'),
    line('2026-12-01T23:05:39.065Z', 'DRAINING -> CLOSED', 'in-flight reached 0'),
  ];
  const merged = withLoggedTransitions(copied, log)!;
  assert.equal(merged.events.proxyDrainStarts?.at, t('39.030'));
  assert.equal(merged.events.inFlightZero?.at, t('39.065'));
  assert.equal(merged.events.lbHealthFails?.at, t('34.030'));
  assert.equal(copied.events.proxyDrainStarts, null, 'the copy itself is left as it was');
  // The drain timeout ends DRAINING without in-flight 0: no [4] is made up.
  const timedOut = withLoggedTransitions(copied, [log[0]!, line('2026-12-01T23:05:59.000Z', 'DRAINING -> CLOSED', 'drain timeout of 20s reached')])!;
  assert.equal(timedOut.events.inFlightZero, null);
});

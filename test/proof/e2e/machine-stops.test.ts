import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lossProblems } from '../harness/expect';
import { describeStops, inFlightAcross, machineStops } from '../harness/machine-stops';
import type { ScenarioRun } from '../harness/scenario';
import type { RequestRecord } from '../../../src/verify/load';

// A stop of the machine (a VM paused for a snapshot) excuses only what was in flight across it; the
// numbers are written out here, never taken from the harness's constants.

const T0 = 2_000_000;

test('a stop is a gap of 5 s or more between two client samples; a late sample under load is not', () => {
  const times = [0, 50, 100, 1100, 1150, 28_970, 29_020].map((t) => T0 + t);
  assert.deepEqual(machineStops(times), [{ fromMs: T0 + 1150, toMs: T0 + 28_970 }]);
  assert.deepEqual(machineStops([T0, T0 + 4999]), []);
  assert.equal(describeStops(machineStops(times), T0 + 29_000), 'the machine stopped 27820 ms (-27850..-30 ms): no client sample in between');
});

test('in flight across a stop means started before it began and ended after it ended', () => {
  const stops = [{ fromMs: 1000, toMs: 9000 }];
  assert.equal(inFlightAcross({ startMs: 900, endMs: 9040 }, stops), true);
  assert.equal(inFlightAcross({ startMs: 1001, endMs: 9040 }, stops), false, 'started in the stop: it was sent after the machine came back');
  assert.equal(inFlightAcross({ startMs: 900, endMs: 8999 }, stops), false, 'ended before the machine came back');
});

function record(outcome: RequestRecord['outcome'], startRel: number, endRel: number, over: Partial<RequestRecord> = {}): RequestRecord {
  return {
    spec: { kind: 'slow', ms: 2800 },
    startMs: T0 + startRel,
    endMs: T0 + endRel,
    worker: 0,
    clientPort: null,
    reusedConnection: true,
    outcome,
    ...over,
  };
}

/** A run of one termination at T0 whose plan predicts no loss; only what lossProblems reads. */
function run(records: RequestRecord[], stops: ScenarioRun['machineStops']): ScenarioRun {
  return {
    records,
    machineStops: stops,
    terminations: [{ startMs: T0, server: 'gw-1' }],
    downs: [],
    lbLog: [],
    plan: { findings: [], loadBalancer: { cutsSessionsOnDown: false } },
    result: { lbCounters: { econ: 0 }, proofs: [] },
  } as unknown as ScenarioRun;
}

test('lossProblems: the 504s and the cut stream in flight across a stop are its; a failure after it is still a loss', () => {
  const stop = { fromMs: T0 - 27_000, toMs: T0 + 30 };
  const timedOut = record('http-504', -27_820, 39);
  const cutStream = record('truncated', -27_819, 171, { spec: { kind: 'stream', chunks: 20, intervalMs: 100 }, chunks: { received: 3, expected: 20 } });
  const afterwards = record('http-504', 500, 3400);
  assert.deepEqual(lossProblems(run([timedOut, cutStream], [stop])), []);
  assert.deepEqual(lossProblems(run([timedOut, cutStream], [])), [
    '2 failure(s) no finding of the plan explains: slow http-504 at -27820..39 ms (no HAProxy line); stream truncated at -27819..171 ms (no HAProxy line)',
    '1 stream(s) lost chunks',
  ]);
  assert.deepEqual(lossProblems(run([timedOut, afterwards], [stop])), [
    '1 failure(s) no finding of the plan explains: slow http-504 at 500..3400 ms (no HAProxy line)',
  ]);
});

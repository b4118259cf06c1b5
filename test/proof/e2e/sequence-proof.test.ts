import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sequenceProblems, upAgain } from '../harness/expect';
import type { SequenceProof } from '../harness/result';
import { relaySlackMs, type RequestLogLine } from '../harness/haproxy';

// What makes an e2e run count as "the sequence ran" (harness/expect.ts sequenceProblems), held to
// hand-written timelines: a run whose drain never started, whose proxy hold was released early,
// whose grace period was too short or whose LB buffer was skipped must be refused, each for its
// own reason. Times in ms after the termination started.

/** A drain-first termination as the lab plan runs it: drain at 0, zero at 2200, 503, CLOSED one LB buffer later. */
const DRAIN_FIRST: SequenceProof = {
  pod: 'pod-1',
  server: 'gw-1',
  sequence: 'gracegate drain-first',
  startMs: 0,
  graceMs: 34_000,
  finalState: 'CLOSED',
  drainTimedOut: false,
  lbFailMs: 2210,
  drainStartMs: 2,
  zeroMs: 2210,
  closedMs: 3215,
  waitClosed: { status: 200, atMs: 3217, text: 'HTTP 200 CLOSED' },
  drainExit: { code: 0, atMs: 3520, text: 'exit 0' },
  containers: [
    { name: 'istio-proxy', preStopEndMs: 3217, sigtermMs: 3217, sigkillMs: null, exitMs: 3720 },
    { name: 'hc', preStopEndMs: 3520, sigtermMs: 3520, sigkillMs: null, exitMs: 3540 },
  ],
  lbDownMs: 2790,
  lbNolbMs: null,
  lastServedEndMs: 2201,
  lastRequestStartMs: 4700,
};

const with_ = (over: Partial<SequenceProof>): SequenceProof => ({ ...DRAIN_FIRST, ...over });

test('a termination that ran its sequence has no problem', () => {
  assert.deepEqual(sequenceProblems(DRAIN_FIRST, 'drain-first'), []);
});

test('the drain never started: the sidecar stayed OPEN, /wait-closed hit its bound, nothing at the LB', () => {
  const p = with_({
    finalState: 'OPEN',
    lbFailMs: null,
    drainStartMs: null,
    zeroMs: null,
    closedMs: null,
    lbDownMs: null,
    waitClosed: { status: 504, atMs: 13_000, text: 'HTTP 504 OPEN' },
    drainExit: { code: 0, atMs: 10_100, text: 'exit 0' },
  });
  const problems = sequenceProblems(p, 'drain-first');
  for (const expected of [/ended in OPEN, not CLOSED/, /event \[3\].*never happened/, /\/wait-closed answered HTTP 504/, /never marked gw-1 DOWN/]) {
    assert.ok(
      problems.some((x) => expected.test(x)),
      `${expected} in ${JSON.stringify(problems)}`,
    );
  }
});

test('the hold released early: /wait-closed answered, and istio-proxy got SIGTERM, before CLOSED', () => {
  const p = with_({
    waitClosed: { status: 200, atMs: 3, text: 'HTTP 200' },
    containers: [{ ...DRAIN_FIRST.containers[0]!, preStopEndMs: 3, sigtermMs: 3, exitMs: 503 }, DRAIN_FIRST.containers[1]!],
  });
  const problems = sequenceProblems(p, 'drain-first');
  assert.ok(
    problems.some((x) => /before CLOSED \(3215 ms\): the proxy hold was released early/.test(x)),
    JSON.stringify(problems),
  );
  assert.ok(
    problems.some((x) => /istio-proxy got SIGTERM at 3 ms, before CLOSED/.test(x)),
    JSON.stringify(problems),
  );
});

test('a grace period shorter than the sequence: the kubelet SIGKILLed, the hooks were abandoned', () => {
  const p = with_({
    graceMs: 3000,
    finalState: 'CLOSING',
    closedMs: null,
    waitClosed: { status: null, atMs: 3000, text: 'abandoned at the grace period' },
    drainExit: { code: null, atMs: 3000, text: 'abandoned at the grace period' },
    containers: [
      { name: 'istio-proxy', preStopEndMs: 3000, sigtermMs: 3000, sigkillMs: 5000, exitMs: 3500 },
      { name: 'hc', preStopEndMs: 3000, sigtermMs: 3000, sigkillMs: 5000, exitMs: 5001 },
    ],
  });
  const problems = sequenceProblems(p, 'drain-first');
  assert.ok(
    problems.some((x) => /SIGKILL at the grace period \(3000 ms\) for istio-proxy, hc/.test(x)),
    JSON.stringify(problems),
  );
  assert.ok(
    problems.some((x) => /gracegate drain ended with abandoned/.test(x)),
    JSON.stringify(problems),
  );
});

test("the LB buffer skipped: each sequence's protected step came before the LB acted", () => {
  assert.ok(
    sequenceProblems(with_({ closedMs: 2215, waitClosed: { status: 200, atMs: 2216, text: '' } }), 'drain-first').some((x) =>
      /before HAProxy marked gw-1 DOWN \(2790 ms\): the LB buffer did not cover detection/.test(x),
    ),
  );
  const healthFirst = with_({ lbFailMs: 1, drainStartMs: 3, lbDownMs: 590, zeroMs: 2210, closedMs: 2210 });
  assert.ok(sequenceProblems(healthFirst, 'health-first').some((x) => /\[3\] started at 3 ms, before HAProxy marked gw-1 DOWN \(590 ms\)/.test(x)));
  assert.deepEqual(sequenceProblems({ ...healthFirst, drainStartMs: 1003 }, 'health-first'), []);
  assert.ok(
    sequenceProblems({ ...healthFirst, drainStartMs: 1003, lbNolbMs: 1200 }, 'soft-drain').some((x) => /before HAProxy put gw-1 in NOLB \(1200 ms\)/.test(x)),
  );
});

test('in-flight always 0: [4] came before a response the pod was still sending', () => {
  const p = with_({ zeroMs: 5, lastServedEndMs: 2201 });
  assert.ok(sequenceProblems(p, 'drain-first').some((x) => /\[4\] in-flight 0 at 5 ms, but HAProxy logged a response from gw-1 ending at 2201 ms/.test(x)));
  assert.deepEqual(
    sequenceProblems(with_({ zeroMs: 2200, lastServedEndMs: 2201 }), 'drain-first'),
    [],
    "HAProxy's log is in whole milliseconds: 1 ms is within its slack",
  );
  // The e2e harness reads when the pod's own Envoy sent the response's last byte, and says so.
  assert.ok(
    sequenceProblems(with_({ zeroMs: 5, lastServedEndMs: 2201, lastServedBy: 'its Envoy' }), 'drain-first').some((x) =>
      /\[4\] in-flight 0 at 5 ms, but its Envoy logged a response from gw-1 ending at 2201 ms/.test(x),
    ),
  );
  // On the cluster (no Envoy log per request) HAProxy's log is the witness, and under load HAProxy
  // reads a sent response late: the run's own relay measure (relaySlackMs) is the slack, and only
  // that: 14 ms late passes with a measured 20, fails with a measured 10.
  assert.deepEqual(sequenceProblems(with_({ zeroMs: 2673, lastServedEndMs: 2687, relaySlackMs: 20 }), 'drain-first'), []);
  assert.ok(
    sequenceProblems(with_({ zeroMs: 2673, lastServedEndMs: 2687, relaySlackMs: 10 }), 'drain-first').some((x) =>
      /ending at 2687 ms \(beyond the 10 ms the run's relay took at most\)/.test(x),
    ),
  );
});

test("the run's relay measure: the most a /slow request of the server took beyond what the app was asked to wait", () => {
  const line = (server: string, serverMs: number, path: string): RequestLogLine => ({
    atMs: 0,
    text: '',
    clientPort: 1,
    server,
    status: 200,
    terminationState: '----',
    startMs: 0,
    endMs: 0,
    serverMs,
    path,
  });
  const log = [
    line('gw-1', 205, '/slow?ms=200'),
    line('gw-1', 1017, '/slow?ms=1000'),
    line('gw-1', 1900, '/stream?chunks=10&intervalMs=150'),
    line('gw-1', -1, '/slow?ms=50'),
    line('gw-2', 400, '/slow?ms=50'),
  ];
  assert.equal(relaySlackMs(log, 'gw-1'), 17, 'the slowest /slow of gw-1; streams, unanswered requests and other servers do not count');
  assert.equal(relaySlackMs([], 'gw-1'), 0);
});

test('a load that ended before the LB acted or before the proxy exited proves nothing about them', () => {
  assert.ok(sequenceProblems(with_({ lastRequestStartMs: 2500 }), 'drain-first').some((x) => /load stopped .* before HAProxy took gw-1 out/.test(x)));
  assert.ok(sequenceProblems(with_({ lastRequestStartMs: 3600 }), 'drain-first').some((x) => /load stopped .* before the proxy exited \(3720 ms\)/.test(x)));
});

test('a drain timeout is not a finished sequence', () => {
  assert.ok(sequenceProblems(with_({ drainTimedOut: true }), 'drain-first').some((x) => /drain timeout/.test(x)));
});

test("soft-drain on the cluster: NOLB, then the node's server UP again with a replacement pod before any DOWN, counts as taken out; UP while this pod's proxy still ran does not", () => {
  // The server is a node's health NodePort: after this pod's proxy exited (3720 ms) another pod on
  // the node answered 200 before HAProxy had counted enough failures for DOWN.
  const soft = with_({ sequence: 'gracegate soft-drain', lbFailMs: 100, drainStartMs: 1200, lbNolbMs: 150, lbDownMs: null, lbUpAgainMs: 9000 });
  assert.deepEqual(sequenceProblems(soft, 'soft-drain'), []);
  assert.ok(sequenceProblems({ ...soft, lbUpAgainMs: 3000 }, 'soft-drain').includes('HAProxy never marked gw-1 DOWN'), 'UP before its proxy exited');
  assert.ok(sequenceProblems({ ...soft, lbUpAgainMs: null }, 'soft-drain').includes('HAProxy never marked gw-1 DOWN'), 'never UP again');
  assert.ok(sequenceProblems(soft, 'drain-first').includes('HAProxy never marked gw-1 DOWN'), "drain-first's LB out is DOWN");
  assert.ok(
    sequenceProblems({ ...soft, lastRequestStartMs: 120 }, 'soft-drain').some((x) => /load stopped .* before HAProxy took gw-1 out \(150 ms\)/.test(x)),
  );
  assert.equal(
    upAgain([
      { state: 'UP', atMs: 10 },
      { state: 'NOLB', atMs: 150 },
      { state: 'DOWN', atMs: 400 },
      { state: 'UP', atMs: 9000 },
    ]),
    9000,
  );
  assert.equal(upAgain([{ state: 'UP', atMs: 10 }]), null, 'an UP before the server was taken out is not "again"');
});

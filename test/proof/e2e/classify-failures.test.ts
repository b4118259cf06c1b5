import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  classifyFailures,
  failedBeforeItsPodLeft,
  latestAnswer,
  lossProblems,
  slowAnswerOffTheSequence,
  truncatedStreamsBesides,
  type RaceEvidence,
} from '../harness/expect';
import type { ScenarioRun } from '../harness/scenario';
import { httplogTerminationState, parseHttplog, type RequestLogLine } from '../harness/haproxy';
import type { RequestRecord } from '../../../src/verify/load';
import type { PodEnvoyLog } from '../harness/envoy-log';

// The e2e tests excuse two races, within measured allowances (harness/expect.ts). These tests hold
// the sorting itself to its signatures with absolute numbers (milliseconds written out here, never
// taken from the harness's constants), so a loosened window or rule fails them.

const T0 = 1_000_000;
const DOWN_AT = 3000;

function record(over: Partial<RequestRecord> & Pick<RequestRecord, 'outcome'>, startRel: number, endRel: number): RequestRecord {
  return { spec: { kind: 'slow', ms: 200 }, startMs: T0 + startRel, endMs: T0 + endRel, worker: 0, clientPort: 40000, reusedConnection: true, ...over };
}

/** One httplog line as HAProxy writes it (relative times: the harness shifts the log to the termination start). */
function logged(port: number, startMs: number, endMs: number, server = 'gw-1'): RequestLogLine {
  return { atMs: endMs, text: `127.0.0.1:${port} ... ${server}`, clientPort: port, server, status: 200, terminationState: '----', startMs, endMs };
}

function evidence(records: RequestRecord[], log: RequestLogLine[] = [], downServer = 'gw-1'): RaceEvidence {
  return { terminations: [{ startMs: T0, server: 'gw-1' }], records, downs: [{ atMs: DOWN_AT, server: downServer }], lbLog: log };
}

test("a connect cut is a reset that starts and ends within 50 ms of the leaving pod's DOWN; 100 ms before it is a loss", () => {
  const cut = record({ outcome: 'ECONNRESET', reusedConnection: false }, 2999, 3001);
  const cut40 = record({ outcome: 'ECONNRESET', reusedConnection: false }, 2960, 3002);
  const before100 = record({ outcome: 'ECONNRESET', reusedConnection: false }, 2900, 2901);
  const servedLong = record({ outcome: 'ECONNRESET', reusedConnection: false }, 2200, 3001);
  const after60 = record({ outcome: 'ECONNRESET', reusedConnection: false }, 3060, 3062);
  const c = classifyFailures(evidence([cut, cut40, before100, servedLong, after60]));
  assert.deepEqual(c.cutAtDown, [cut, cut40]);
  assert.deepEqual(c.other, [before100, servedLong, after60]);
});

test("a cut counts only against the DOWN of a pod that was leaving, not any server's", () => {
  const atOtherDown = record({ outcome: 'ECONNRESET', reusedConnection: false }, 2999, 3001);
  const c = classifyFailures(evidence([atOtherDown], [], 'gw-2'));
  assert.deepEqual(c.cutAtDown, []);
  assert.deepEqual(c.other, [atOtherDown]);
});

test('the keep-alive race: reused connection, reset within 20 ms, previous request on it ended before and at most 20 ms before', () => {
  const port = 41000;
  const race = record({ outcome: 'ECONNRESET', clientPort: port }, 1263, 1264);
  const fresh = record({ outcome: 'ECONNRESET', clientPort: port + 1, reusedConnection: false }, 1263, 1264);
  const reset60 = record({ outcome: 'ECONNRESET', clientPort: port + 2 }, 1263, 1323);
  const idleBefore = record({ outcome: 'ECONNRESET', clientPort: port + 3 }, 1263, 1264);
  const previousStillRunning = record({ outcome: 'ECONNRESET', clientPort: port + 4 }, 1263, 1264);
  const previousElsewhere = record({ outcome: 'ECONNRESET', clientPort: port + 5 }, 1263, 1264);
  const c = classifyFailures(
    evidence(
      [race, fresh, reset60, idleBefore, previousStillRunning, previousElsewhere],
      [
        logged(port, 1000, 1262),
        logged(port + 1, 1000, 1262),
        logged(port + 2, 1000, 1262),
        logged(port + 3, 900, 1063),
        logged(port + 4, 1000, 1290),
        logged(port + 6, 1000, 1262),
      ],
    ),
  );
  assert.deepEqual(c.keepAliveRace, [race]);
  assert.deepEqual(c.other, [fresh, reset60, idleBefore, previousStillRunning, previousElsewhere]);
});

test("the failed request's own log line is not taken for the request before it", () => {
  const port = 42000;
  const failed = record({ outcome: 'ECONNRESET', clientPort: port }, 1263, 1264);
  // HAProxy logged the failed request itself (it started when the client sent it), and nothing before it.
  const c = classifyFailures(evidence([failed], [{ ...logged(port, 1263, 1264), status: -1, terminationState: 'SD--' }]));
  assert.deepEqual(c.keepAliveRace, []);
  assert.deepEqual(c.other, [failed]);
});

test('statuses and truncated streams are never a race, and successes are not failures', () => {
  const c = classifyFailures(
    evidence([record({ outcome: 'http-503' }, 2999, 3001), record({ outcome: 'truncated' }, 2999, 3001), record({ outcome: 'ok' }, 10, 60)]),
  );
  assert.equal(c.other.length, 2);
  assert.equal(c.cutAtDown.length + c.keepAliveRace.length, 0);
});

test("an httplog line gives client port, server, status, state, and HAProxy's own start and end times", () => {
  const line =
    '127.0.0.1:57134 [30/Nov/2026:04:17:32.460] e2e gateway/gw-1 0/0/0/0/1353 200 225 - - ---- 12/12/11/2/0 0/0 "GET /stream?chunks=10&intervalMs=150 HTTP/1.1"';
  const start = new Date(2026, 10, 30, 4, 17, 32, 460).getTime();
  assert.deepEqual(parseHttplog(line, 7), {
    atMs: 7,
    text: line,
    clientPort: 57134,
    server: 'gw-1',
    status: 200,
    terminationState: '----',
    startMs: start,
    endMs: start + 1353,
    serverMs: 0,
    connectMs: 0,
    retries: 0,
    redispatched: false,
    path: '/stream?chunks=10&intervalMs=150',
  });
  // A connect timed out twice on gw-2 (HAProxy's %Tc is the carrying connect, %rc the retries) and
  // the last try was redispatched to gw-1 ('+').
  const redispatched = parseHttplog(
    '127.0.0.1:40000 [30/Nov/2026:04:17:32.460] e2e gateway/gw-1 0/0/2001/12/2013 200 225 - - ---- 12/12/11/2/+3 0/0 "GET /slow?ms=10 HTTP/1.1"',
    0,
  );
  assert.deepEqual([redispatched?.connectMs, redispatched?.retries, redispatched?.redispatched], [2001, 3, true]);
  assert.equal(
    httplogTerminationState('127.0.0.1:57134 [30/Nov/2026:04:20:20.700] f b/s1 0/0/-1/-1/3004 503 217 - - SC-- 1/1/0/0/3 0/0 "GET /slow?ms=10 HTTP/1.1"'),
    'SC--',
  );
  assert.equal(
    parseHttplog('127.0.0.1:5 [30/Nov/2026:04:20:20.700] f b/<NOSRV> -1/-1/-1/-1/+0 -1 0 - - CR-- 1/1/0/0/0 0/0 "<BADREQ>"', 0)?.endMs,
    new Date(2026, 10, 30, 4, 20, 20, 700).getTime(),
  );
  assert.equal(
    httplogTerminationState(
      '[WARNING]  (771) : Server gateway/gw-1 is DOWN, reason: Layer7 wrong status, code: 503, info: "Service Unavailable", check duration: 1ms. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.',
    ),
    null,
  );
});

test('a raced stream is excused its missing chunks; any other short stream is not', () => {
  const stream = { kind: 'stream', chunks: 10, intervalMs: 150 } as const;
  const raced = record({ outcome: 'ECONNRESET', spec: stream, chunks: { received: 0, expected: 10 } }, 1263, 1264);
  const short = record({ outcome: 'truncated', spec: stream, chunks: { received: 6, expected: 10 } }, 100, 1500);
  const whole = record({ outcome: 'ok', spec: stream, chunks: { received: 10, expected: 10 } }, 100, 1500);
  assert.deepEqual(truncatedStreamsBesides({ records: [raced, short, whole] }, [raced]), [short]);
  assert.deepEqual(truncatedStreamsBesides({ records: [raced, whole] }, []), [raced]);
});

test("drain-first's listener-close reset: a reset within 50 ms of a leaving pod's drain [3], before the request could be answered; later, longer, or at another pod's drain it is a loss", () => {
  const DRAIN_AT = 1200;
  const withDrain = (records: RequestRecord[], server = 'gw-1'): RaceEvidence => ({
    ...evidence(records),
    result: { proofs: [{ server, drainStartMs: DRAIN_AT }] },
  });
  // A 200 ms request sent 7 ms before the drain, reset 84 ms later (seen in CI at load average 10).
  const atDrain = record({ outcome: 'ECONNRESET', reusedConnection: true }, DRAIN_AT - 7, DRAIN_AT + 77);
  const after40 = record({ outcome: 'ECONNRESET', reusedConnection: false }, DRAIN_AT + 40, DRAIN_AT + 45);
  const before60 = record({ outcome: 'ECONNRESET', reusedConnection: false }, DRAIN_AT - 60, DRAIN_AT - 55);
  const answeredLong = record({ outcome: 'ECONNRESET', reusedConnection: false }, DRAIN_AT - 5, DRAIN_AT + 300);
  const c = classifyFailures(withDrain([atDrain, after40, before60, answeredLong]));
  assert.deepEqual(c.keepAliveRace, [atDrain, after40]);
  assert.deepEqual(c.other, [before60, answeredLong]);
  assert.deepEqual(classifyFailures(withDrain([atDrain], 'gw-2')).other, [atDrain], 'the drain of a pod that was not leaving explains nothing');
});

test('a failure before anything left: started before the first termination, on a pod whose own termination began only after it ended', () => {
  const timedOut = record({ outcome: 'http-504', clientPort: 41000 }, -938, 2396);
  const line = { ...logged(41000, -746, 2256, 'gw-3'), status: 504, terminationState: 'sH--' };
  const terminations = [
    { startMs: T0, server: 'gw-1' },
    { startMs: T0 + 12632, server: 'gw-3' },
  ];
  const run = { lbLog: [line], terminations } as unknown as Parameters<typeof failedBeforeItsPodLeft>[0];
  assert.equal(failedBeforeItsPodLeft(run, T0, timedOut), true);
  // On the pod that was leaving at the time, or started after the first termination: the sequence's to explain.
  assert.equal(failedBeforeItsPodLeft({ ...run, lbLog: [{ ...line, server: 'gw-1' }] }, T0, timedOut), false);
  assert.equal(failedBeforeItsPodLeft(run, T0, record({ outcome: 'http-504', clientPort: 41000 }, 10, 2396)), false);
  // Not logged by HAProxy: nothing says where it went.
  assert.equal(failedBeforeItsPodLeft({ ...run, lbLog: [] }, T0, timedOut), false);
});

test('a late answer off the sequence: a 504 on an old pod that was not leaving when it failed', () => {
  // Seen in CI on the cluster: a request of at most 2 s, sent 3514 ms after the delete, met the
  // lab's 4 s server timeout (sH) 4007 ms later.
  const timedOut = record({ outcome: 'http-504', clientPort: 42000, spec: { kind: 'slow', ms: 2000 } }, 3514, 7521);
  const late = { ...logged(42000, 3513, 7520, 'gw-2'), status: 504, terminationState: 'sH--', serverMs: -1, path: '/slow?ms=2000' };
  const servedBefore = logged(42000, -900, -700, 'gw-2');
  const terminations = [
    { startMs: T0, server: 'gw-1' },
    { startMs: T0 + 20_000, server: 'gw-2' },
  ];
  const run = { lbLog: [servedBefore, late], terminations } as unknown as Parameters<typeof slowAnswerOffTheSequence>[0];
  assert.equal(slowAnswerOffTheSequence(run, T0, timedOut), true);
  // On the leaving pod: the sequence's to explain.
  assert.equal(
    slowAnswerOffTheSequence(
      {
        ...run,
        lbLog: [
          { ...servedBefore, server: 'gw-1' },
          { ...late, server: 'gw-1' },
        ],
      },
      T0,
      timedOut,
    ),
    false,
  );
  // On a pod whose own termination had begun before the answer was due.
  const leftEarly = [terminations[0]!, { startMs: T0 + 7000, server: 'gw-2' }];
  assert.equal(slowAnswerOffTheSequence({ ...run, terminations: leftEarly } as unknown as typeof run, T0, timedOut), false);
  // On a pod that served nothing before the first termination: a new pod, the start half's to explain.
  assert.equal(slowAnswerOffTheSequence({ ...run, lbLog: [{ ...servedBefore, server: 'gw-3' }, late] }, T0, timedOut), false);
  assert.equal(slowAnswerOffTheSequence({ ...run, lbLog: [{ ...servedBefore, startMs: 10 }, late] }, T0, timedOut), false);
  // Not a server timeout: a reset, a 503 or a 504 HAProxy did not log as sH is no late answer.
  assert.equal(slowAnswerOffTheSequence({ ...run, lbLog: [servedBefore, { ...late, terminationState: 'SD--' }] }, T0, timedOut), false);
  assert.equal(slowAnswerOffTheSequence(run, T0, { ...timedOut, outcome: 'ECONNRESET' }), false);
  assert.equal(slowAnswerOffTheSequence({ ...run, lbLog: [servedBefore] }, T0, timedOut), false);

  // lossProblems excuses it, and names where an unexplained one went.
  const lossRun = (log: typeof run.lbLog): ScenarioRun =>
    ({
      records: [timedOut],
      machineStops: [],
      terminations,
      downs: [],
      lbLog: log,
      plan: { findings: [], loadBalancer: { cutsSessionsOnDown: false } },
      result: { lbCounters: { econ: 0 }, proofs: [] },
    }) as unknown as ScenarioRun;
  assert.deepEqual(lossProblems(lossRun([servedBefore, late])), []);
  assert.deepEqual(
    lossProblems(
      lossRun([
        { ...servedBefore, server: 'gw-1' },
        { ...late, server: 'gw-1' },
      ]),
    ),
    ['1 failure(s) no finding of the plan explains: slow http-504 at 3514..7521 ms (on gw-1, sH--, Tr -1 ms /slow?ms=2000)'],
  );
});

test('the latest answer: the answered slow request furthest past its own length, and its server', () => {
  const onTime = record({ outcome: 'ok', clientPort: 43000, spec: { kind: 'slow', ms: 2000 } }, 100, 2130);
  const late = record({ outcome: 'ok', clientPort: 43001, spec: { kind: 'slow', ms: 50 } }, 200, 1450);
  const failed = record({ outcome: 'http-504', clientPort: 43002, spec: { kind: 'slow', ms: 2000 } }, 300, 4300);
  const stream = record({ outcome: 'ok', clientPort: 43003, spec: { kind: 'stream', chunks: 10, intervalMs: 150 } }, 0, 9000);
  const run = { records: [onTime, late, failed, stream], lbLog: [logged(43001, 199, 1449, 'gw-2')], terminations: [{ startMs: T0, server: 'gw-1' }] };
  assert.deepEqual(latestAnswer(run as unknown as Parameters<typeof latestAnswer>[0]), { lateMs: 1200, server: 'gw-2' });
  assert.equal(latestAnswer({ ...run, records: [failed, stream] } as unknown as Parameters<typeof latestAnswer>[0]), null);
});

test("the listener close's window is the run's own: from the drain [3] to the sidecar's record of Envoy's answer, plus 50 ms", () => {
  const DRAIN_AT = 1200;
  // Seen at load average 26: the sidecar's drain calls answered 143 ms after [3]; a 500 ms request
  // sent 138 ms after [3] on a reused connection, reset 97 ms later on the leaving server.
  const late = record({ outcome: 'ECONNRESET', spec: { kind: 'slow', ms: 500 } }, DRAIN_AT + 138, DRAIN_AT + 235);
  const afterAck60 = record({ outcome: 'ECONNRESET', clientPort: 40001 }, DRAIN_AT + 203, DRAIN_AT + 210);
  const backBefore = record({ outcome: 'ECONNRESET', clientPort: 40002 }, DRAIN_AT - 300, DRAIN_AT - 1);
  const withAck = (records: RequestRecord[], drainAckedMs: number | null): RaceEvidence => ({
    ...evidence(records),
    result: { proofs: [{ server: 'gw-1', drainStartMs: DRAIN_AT, drainAckedMs }] },
  });
  const c = classifyFailures(withAck([late, afterAck60, backBefore], DRAIN_AT + 143));
  assert.deepEqual(c.keepAliveRace, [late]);
  assert.deepEqual(c.other, [afterAck60, backBefore]);
  // Unanswered drain calls: the window is [3] + 50 ms, as before it was measured.
  assert.deepEqual(classifyFailures(withAck([late], null)).other, [late]);
});

test("with the pods' Envoy logs, a listener-close reset is one no pod ever saw, however late the client saw it reset", () => {
  const DRAIN_AT = 1200;
  const ACK = DRAIN_AT + 150;
  const envoy = (requests: PodEnvoyLog['requests'], diedAtMs: number | null = 9000): PodEnvoyLog => ({ pod: 'pod-1', server: 'gw-1', diedAtMs, requests });
  const served = (clientPort: number, startMs: number, endMs: number) => ({ clientPort, session: null, startMs, endMs, code: 0, flags: 'UR', details: '-' });
  const run = (records: RequestRecord[], envoys: PodEnvoyLog[]): RaceEvidence => ({
    ...evidence(records),
    result: { proofs: [{ server: 'gw-1', drainStartMs: DRAIN_AT, drainAckedMs: ACK }] },
    envoys,
  });
  // A 50 ms request sent 3 ms after [3], its reset seen 180 ms later (the listener closed at the
  // answer, and the client's loop lagged): longer than the request, yet no pod ever had it.
  const slowSeen = record({ outcome: 'ECONNRESET', clientPort: 43000, spec: { kind: 'slow', ms: 50 } }, DRAIN_AT + 3, DRAIN_AT + 183);
  assert.deepEqual(classifyFailures(run([slowSeen], [envoy([])])).keepAliveRace, [slowSeen]);
  // The same, but a pod's Envoy logged a request from its connection in its span: a pod had it.
  assert.deepEqual(classifyFailures(run([slowSeen], [envoy([served(43000, DRAIN_AT + 5, DRAIN_AT + 180)])])).other, [slowSeen]);
  // Another connection's request says nothing of it, nor does one of its connection before it was sent.
  assert.deepEqual(
    classifyFailures(run([slowSeen], [envoy([served(43001, DRAIN_AT + 5, DRAIN_AT + 180), served(43000, DRAIN_AT - 400, DRAIN_AT - 10)])])).keepAliveRace,
    [slowSeen],
  );
  // An Envoy died while it was out: one killed holding it would have logged nothing.
  assert.deepEqual(classifyFailures(run([slowSeen], [envoy([], DRAIN_AT + 100)])).other, [slowSeen]);
  // Sent after the listeners had closed (answer + 50 ms): a refused connect is re-sent, never reset.
  const afterClose = record({ outcome: 'ECONNRESET', clientPort: 43002 }, ACK + 51, ACK + 60);
  assert.deepEqual(classifyFailures(run([afterClose], [envoy([])])).other, [afterClose]);
});

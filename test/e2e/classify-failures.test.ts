import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyFailures, DOWN_RACE_WINDOW_MS, NO_ANSWER_MS, truncatedStreamsBesides, type RaceEvidence } from './harness/expect';
import { httplogTerminationState } from './harness/haproxy';
import type { RequestRecord } from './harness/load';

// The e2e tests let two races through, bounded (harness/expect.ts). These tests hold the sorting
// itself to its signatures, so a loosened rule cannot quietly pass a real loss as a race.

const T0 = 1_000_000;
const DOWN_AT = 3000;

function record(over: Partial<RequestRecord> & Pick<RequestRecord, 'outcome'>, startRel: number, endRel: number): RequestRecord {
  return { spec: { kind: 'slow', ms: 200 }, startMs: T0 + startRel, endMs: T0 + endRel, worker: 0, clientPort: 40000, reusedConnection: true, ...over };
}

const line = (port: number, server: string, state = '----') =>
  `127.0.0.1:${port} [30/Nov/2026:04:17:32.460] e2e gateway/${server} 0/0/0/0/1353 200 225 - - ${state} 12/12/11/2/0 0/0 "GET /stream?chunks=10&intervalMs=150 HTTP/1.1"`;

function evidence(records: RequestRecord[], log: Array<{ atMs: number; port: number }> = []): RaceEvidence {
  return {
    terminations: [{ startMs: T0 }],
    records,
    downs: [{ atMs: DOWN_AT, server: 'gw-1', sessionsActive: 1 }],
    haproxyLog: log.map((l) => ({ atMs: l.atMs, text: line(l.port, 'gw-1'), clientPort: l.port, terminationState: '----' })),
  };
}

test('a reset that starts and ends at the DOWN is the connect cut; one that started long before is a killed request', () => {
  const cut = record({ outcome: 'ECONNRESET' }, DOWN_AT - 1, DOWN_AT + 1);
  const killed = record({ outcome: 'ECONNRESET' }, DOWN_AT - 800, DOWN_AT + 1);
  const late = record({ outcome: 'ECONNRESET', reusedConnection: false }, DOWN_AT + DOWN_RACE_WINDOW_MS + 10, DOWN_AT + DOWN_RACE_WINDOW_MS + 12);
  const c = classifyFailures(evidence([cut, killed, late]));
  assert.deepEqual(c.cutAtDown, [cut]);
  assert.deepEqual(c.other, [killed, late]);
  assert.deepEqual(c.keepAliveRace, []);
});

test('the keep-alive race needs all of its signature: reused connection, no answer, previous request ended just before', () => {
  const port = 41000;
  const race = record({ outcome: 'ECONNRESET', clientPort: port }, 1263, 1264);
  const fresh = record({ outcome: 'ECONNRESET', clientPort: port + 1, reusedConnection: false }, 1263, 1264);
  const answeredLate = record({ outcome: 'ECONNRESET', clientPort: port + 2 }, 1263, 1263 + NO_ANSWER_MS + 40);
  const idleBefore = record({ outcome: 'ECONNRESET', clientPort: port + 3 }, 1263, 1264);
  const c = classifyFailures(evidence([race, fresh, answeredLate, idleBefore], [
    { atMs: 1264, port },
    { atMs: 1264, port: port + 1 },
    { atMs: 1262, port: port + 2 },
    { atMs: 1263 - NO_ANSWER_MS - 200, port: port + 3 },
  ]));
  assert.deepEqual(c.keepAliveRace, [race]);
  assert.deepEqual(c.other, [fresh, answeredLate, idleBefore]);
});

test('statuses and truncated streams are never a race, and successes are not failures', () => {
  const c = classifyFailures(evidence([
    record({ outcome: 'http-503' }, DOWN_AT - 1, DOWN_AT + 1),
    record({ outcome: 'truncated' }, DOWN_AT - 1, DOWN_AT + 1),
    record({ outcome: 'ok' }, 10, 60),
  ]));
  assert.equal(c.other.length, 2);
  assert.equal(c.cutAtDown.length + c.keepAliveRace.length, 0);
});

test('the httplog termination state is read from the right field', () => {
  assert.equal(httplogTerminationState(line(1, 'gw-1')), '----');
  assert.equal(httplogTerminationState(line(1, 'gw-1', 'SC--')), 'SC--');
  assert.equal(httplogTerminationState('127.0.0.1:57134 [30/Nov/2026:04:20:20.700] f b/s1 0/0/-1/-1/3004 503 217 - - SC-- 1/1/0/0/3 0/0 "GET /slow?ms=10 HTTP/1.1"'), 'SC--');
  assert.equal(httplogTerminationState('[WARNING]  (771) : Server gateway/gw-1 is DOWN, reason: Layer7 wrong status, code: 503, info: "Service Unavailable", check duration: 1ms. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.'), null);
});

test('a raced stream is excused its missing chunks; any other short stream is not', () => {
  const stream = { kind: 'stream', chunks: 10, intervalMs: 150 } as const;
  const raced = record({ outcome: 'ECONNRESET', spec: stream, chunks: { received: 0, expected: 10 } }, 1263, 1264);
  const short = record({ outcome: 'truncated', spec: stream, chunks: { received: 6, expected: 10 } }, 100, 1500);
  const whole = record({ outcome: 'ok', spec: stream, chunks: { received: 10, expected: 10 } }, 100, 1500);
  assert.deepEqual(truncatedStreamsBesides({ records: [raced, short, whole] }, [raced]), [short]);
  assert.deepEqual(truncatedStreamsBesides({ records: [raced, whole] }, []), [raced]);
});

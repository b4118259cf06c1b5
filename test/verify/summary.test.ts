import { test } from 'node:test';
import assert from 'node:assert/strict';
import { XMLValidator } from 'fast-xml-parser';
import type { RequestRecord } from '../../src/verify/load';
import { verifyReport } from '../../src/verify/report';
import type { VerifyRun } from '../../src/verify/run-verify';
import { failureKind, summarize, verdictOf } from '../../src/verify/summary';
import { renderVerifySvg } from '../../src/verify/timeline-svg';
import { renderVerifyText } from '../../src/verify/report';

const paths = { slow: (ms: number) => `/slow?ms=${ms}`, stream: (c: number, i: number) => `/stream?chunks=${c}&intervalMs=${i}` };
const T0 = 1_000_000;
const rec = (startMs: number, endMs: number, outcome: RequestRecord['outcome'], extra: Partial<RequestRecord> = {}): RequestRecord => ({
  spec: { kind: 'slow', ms: 50 },
  startMs: T0 + startMs,
  endMs: T0 + endMs,
  outcome,
  worker: 0,
  clientPort: 1,
  reusedConnection: false,
  ...extra,
});

test("failureKind: the load generator's outcomes under the user's names; ok and cancelled are no failure", () => {
  assert.equal(failureKind('ok'), null);
  assert.equal(failureKind('cancelled'), null);
  assert.equal(failureKind('ECONNREFUSED'), 'refused');
  assert.equal(failureKind('ECONNRESET'), 'reset');
  assert.equal(failureKind('http-503'), 'http-503');
  assert.equal(failureKind('truncated'), 'truncated');
  assert.equal(failureKind('timeout'), 'timeout');
  assert.equal(failureKind('error-EPIPE'), 'error-EPIPE');
});

test("summarize: counts each outcome once, cancelled apart, every failure on the termination's clock in start order", () => {
  const stream = { spec: { kind: 'stream' as const, chunks: 10, intervalMs: 150 }, chunks: { received: 4, expected: 10 } };
  const s = summarize(
    [
      rec(-500, -450, 'ok'),
      rec(120, 121, 'ECONNRESET', { reusedConnection: true }),
      rec(30, 40, 'http-503'),
      rec(200, 260, 'ok'),
      rec(-100, 700, 'truncated', stream),
      rec(900, 901, 'ECONNREFUSED'),
      rec(1000, 2000, 'cancelled'),
      rec(300, 30_300, 'timeout'),
    ],
    T0,
    paths,
    null,
  );
  assert.equal(s.requests, 7);
  assert.equal(s.ok, 2);
  assert.equal(s.cancelled, 1);
  assert.equal(s.failures, 5);
  assert.deepEqual(s.failuresByKind, { reset: 1, 'http-503': 1, truncated: 1, refused: 1, timeout: 1 });
  assert.deepEqual(
    s.failed.map((f) => [f.kind, f.startMs, f.endMs]),
    [
      ['truncated', -100, 700],
      ['http-503', 30, 40],
      ['reset', 120, 121],
      ['timeout', 300, 30_300],
      ['refused', 900, 901],
    ],
  );
  assert.equal(s.failed[0]!.path, '/stream?chunks=10&intervalMs=150');
  assert.deepEqual(s.failed[0]!.chunks, { received: 4, expected: 10 });
  assert.equal(s.failed[2]!.reusedConnection, true);
});

test('verdictOf: 0 expected without a spec or when the plan predicts none; a predicted loss names its findings', () => {
  assert.equal(verdictOf(0, null).status, 'pass');
  assert.equal(verdictOf(0, { findings: [{ id: 'x', expectedLoss: 'refused-connections' }] }).status, 'pass');
  assert.equal(verdictOf(2, null).status, 'loss');
  assert.match(verdictOf(2, null).text, /no --spec given/);
  assert.equal(verdictOf(2, { findings: [] }).status, 'loss');
  const p = verdictOf(3, { findings: [{ id: 'drain-first-without-redispatch', expectedLoss: 'refused-connections' }] });
  assert.equal(p.status, 'predicted');
  assert.match(p.text, /drain-first-without-redispatch \(refused-connections\)/);
});

test("the report and its timeline: times on the termination's clock, the SVG parses and shows each outcome and command", () => {
  const records = [rec(-900, -850, 'ok'), rec(100, 101, 'ECONNRESET'), rec(150, 160, 'http-503'), rec(400, 450, 'ok')];
  const run: VerifyRun = {
    records,
    paths,
    loadStartMs: T0 - 1000,
    loadEndMs: T0 + 2000,
    terminationAt: T0,
    stoppedBy: 'observe',
    terminate: { flag: '--terminate', command: 'kubectl delete pod igw-0 --wait=false', startMs: 1000, endMs: 1200, code: 0, signal: null, output: '' },
    observe: { flag: '--observe', command: 'kubectl wait --for=delete pod/igw-0', startMs: 1200, endMs: 2500, code: 0, signal: null, output: '' },
  };
  const report = verifyReport(run, summarize(records, T0, paths, null), {
    url: 'https://gw.example/<x>&',
    scenario: 's5',
    load: { ratePerSecond: 20, connections: 4, durationMs: 60_000, requestTimeoutMs: 30_000 },
  });
  assert.equal(report.terminationAtMs, 1000);
  assert.equal(report.loadStartMs, -1000);
  assert.equal(report.terminate!.endMs, 200);
  assert.equal(report.observe!.endMs, 1500);
  assert.equal(
    report.timeline.counts.reduce((n, c) => n + Object.values(c).reduce((a, b) => a + b, 0), 0),
    4,
  );
  const text = renderVerifyText(report);
  assert.match(text, /4 requests to https:\/\/gw\.example\/<x>&/);
  assert.match(text, /failures by kind: 1 (reset|http-503), 1 (reset|http-503)/);
  assert.match(text, /\+0\.100 s \.\.\s+\+0\.101 s\s+reset/);
  assert.match(text, /verdict: LOSS/);
  const svg = renderVerifySvg(report);
  assert.equal(XMLValidator.validate(svg), true, 'an escaped URL leaves the SVG well-formed');
  for (const s of [
    'ok: 2',
    'reset: 1',
    'http-503: 1',
    'termination command starts',
    'termination command exits (0)',
    '--observe command exits',
    '&lt;x&gt;&amp;',
  ])
    assert.ok(svg.includes(s), s);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AccessLogSummary, requestDurationsOf } from '../../src/measure/p99-report';
import { parseDurationDist } from '../../src/loss/duration-dist';
import type { LogEntry } from '../../src/measure/access-log';

// Issue 48, item 6: measure recommended 37 s on a log whose /reports route has a p99 of 46.8 s; the
// drain timeout that follows (45 s) cuts that route, and the report said nothing. Now it names the
// route, the value that covers it, and how many requests a day each choice leaves longer than its
// drain timeout.

const HOUR_MS = 3_600_000;
const T0 = Date.parse('2026-12-01T10:00:00.000Z');

/** A deterministic spread of `n` lengths from `minMs` to `maxMs`. */
function spread(n: number, minMs: number, maxMs: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.round(minMs + ((maxMs - minMs) * i) / Math.max(1, n - 1)));
}

function entry(i: number, total: number, authority: string, path: string, durationMs: number): LogEntry {
  return {
    // Spread over one hour: the report scales the counts to a day (x 24).
    startTime: new Date(T0 + Math.round((HOUR_MS * i) / Math.max(1, total - 1))).toISOString(),
    method: 'GET',
    path,
    protocol: 'HTTP/1.1',
    code: 200,
    flags: '-',
    durationMs,
    authority,
    route: null,
  };
}

/** 9000 API calls up to 37 s, and 1000 report downloads of which 40 run 40-46.8 s. */
function issueLog(): AccessLogSummary {
  const api = spread(9000, 20, 37_000);
  const reports = [...spread(960, 100, 20_000), ...spread(40, 40_000, 46_800)];
  const all = [...api.map((ms) => ['shop', '/api', ms] as const), ...reports.map((ms) => ['shop', '/reports', ms] as const)];
  const s = new AccessLogSummary();
  all.forEach(([authority, path, ms], i) => s.add(entry(i, all.length, authority, path, ms)));
  return s;
}

test("the issue's log: the route its recommendation cuts is named, with the value that covers it and the requests a day each leaves", () => {
  const r = issueLog().report({ kind: 'test' });
  assert.equal(r.recommendedLongRequestP99Seconds, 37, 'the p99 over every route is the API calls');
  const warning = r.warnings.find((w) => w.startsWith('route shop/reports:'));
  assert.ok(warning, r.warnings.join('\n'));
  assert.match(warning, /^route shop\/reports: its p99 \(4\d\.\d+ s\) outlasts the drain timeout the recommended 37 s leads to \(ceil\(1\.2 x 37\) = 45 s\)/);
  // 40 requests an hour run 40-46.8 s; those past 45 s, about 11 of them an hour (to the histogram's 2 %): ~260 a day.
  const [, cutNow] = /about (\d+) a day of it run longer/.exec(warning)!;
  assert.ok(Number(cutNow) >= 200 && Number(cutNow) <= 320, `cut a day at the recommendation: ${cutNow}`);
  // 46.8 / 1.2 = 39: a drain timeout of ceil(1.2 x 39) = 47 s covers the longest.
  assert.match(warning, /spec\.traffic\.longRequestP99Seconds: 39 covers its longest \(drain timeout 47 s\) and leaves about 0 a day/);
  assert.ok(!r.warnings.some((w) => w.startsWith('route shop/api:')), 'a route within the drain timeout is not named');
});

test('no route outlasts the drain timeout: no route warning', () => {
  const s = new AccessLogSummary();
  spread(2000, 10, 900).forEach((ms, i) => s.add(entry(i, 2000, 'shop', '/api', ms)));
  const r = s.report({ kind: 'test' });
  assert.deepEqual(
    r.warnings.filter((w) => w.startsWith('route ')),
    [],
  );
});

test("measure's request lengths for spec.traffic.requestDurations parse as the plan reads them", () => {
  const r = issueLog().report({ kind: 'test' });
  assert.match(r.recommendedRequestDurations!, /^lognormal:p50=\d+ms,p99=\d+ms,max=46800ms$/);
  assert.doesNotThrow(() => parseDurationDist(r.recommendedRequestDurations!));
  assert.equal(requestDurationsOf(0.2, 0.2, 0.2), 'fixed:200ms', 'every request as long: fixed');
  assert.equal(requestDurationsOf(1, 30, 700), null, 'past the 10 min the loss model follows: not written');
  assert.equal(requestDurationsOf(0, 0.0004, 0.0004), 'fixed:1ms', 'sub-millisecond requests: 1 ms, the grammar has no less');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { XMLValidator } from 'fast-xml-parser';
import { podStateFlag } from '../../src/cli/verify-command';
import { UsageError } from '../../src/cli/args';
import { TERMINATION_EVENTS } from '../../src/contract/hc';
import { labelSelector, parseStateAnswer, placePodState, type PodStateSample } from '../../src/verify/pod-state';
import { renderVerifyText, verifyReport } from '../../src/verify/report';
import type { VerifyRun } from '../../src/verify/run-verify';
import { summarize } from '../../src/verify/summary';
import { renderVerifySvg } from '../../src/verify/timeline-svg';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const iso = (ms: number): string => new Date(T0 + ms).toISOString();

/** A /state answer as the sidecar writes it: events [1]-[4] observed at the given ms after T0, [5] and [6] estimated. */
function stateJson(state: string, flow: string | null, at: Array<number | null>): string {
  return JSON.stringify({
    state,
    flow,
    sequence: 'drain-first',
    inFlight: 0,
    reason: 'x',
    events: TERMINATION_EVENTS.map((t, i) => ({
      id: t.id,
      name: t.name,
      at: at[i] === null || at[i] === undefined ? null : iso(at[i]!),
      estimated: t.estimated,
      ...(t.id === 5 ? { note: 'lb buffer' } : {}),
    })),
  });
}

test("labelSelector: the pods' labels as kubectl -l takes them", () => {
  assert.equal(labelSelector({ app: 'istio-ingress', istio: 'ingress' }), 'app=istio-ingress,istio=ingress');
});

test("parseStateAnswer: keeps the state, the flow and the events; refuses what is not the sidecar's state", () => {
  const a = parseStateAnswer(stateJson('DRAINING', 'drain-first', [null, 300, 100, null, null, null]));
  assert.equal(a.state, 'DRAINING');
  assert.equal(a.flow, 'drain-first');
  assert.deepEqual(
    a.events.map((e) => e.id),
    [1, 2, 3, 4, 5, 6],
  );
  assert.equal(a.events[2]!.at, iso(100));
  assert.equal(a.events[4]!.note, 'lb buffer');
  assert.throws(() => parseStateAnswer('Error from server'), /not JSON/);
  assert.throws(() => parseStateAnswer('{"state":"MAYBE","events":[]}'), /no sidecar state/);
  assert.throws(() => parseStateAnswer('{"state":"OPEN"}'), /no events/);
  // An unparseable time is no time; an unknown event id is dropped.
  const odd = parseStateAnswer('{"state":"OPEN","flow":null,"events":[{"id":1,"at":"yesterday"},{"id":9,"at":null}]}');
  assert.deepEqual(odd.events, [{ id: 1, at: null, estimated: false }]);
});

test('placePodState: ISO times to ms after the termination command started; the pod whose sequence started is the terminated one', () => {
  const sample: PodStateSample = { answer: parseStateAnswer(stateJson('CLOSED', 'drain-first', [2100, 2100, 120, 1800, 2600, 2600])), answeredAt: T0 + 3000 };
  const leaving = placePodState('igw-a', sample, T0);
  assert.equal(leaving.terminated, true);
  assert.equal(leaving.state, 'CLOSED');
  assert.equal(leaving.answeredAtMs, 3000);
  assert.deepEqual(
    leaving.events.map((e) => [e.id, e.name, e.atMs]),
    [
      [1, 'lb-health-fails', 2100],
      [2, 'readiness-fails', 2100],
      [3, 'proxy-drain-starts', 120],
      [4, 'in-flight-zero', 1800],
      [5, 'lb-marks-down', 2600],
      [6, 'lb-resets-sessions', 2600],
    ],
  );
  assert.match(leaving.events[4]!.note!, /^estimated by the sidecar.*; lb buffer$/);
  assert.equal(leaving.events[0]!.note, undefined);
  // Before the termination: negative.
  assert.equal(placePodState('igw-a', sample, T0 + 5000).events[2]!.atMs, -4880);
  const staying = placePodState('igw-b', { answer: parseStateAnswer(stateJson('OPEN', null, [])), answeredAt: T0 + 3000 }, T0);
  assert.equal(staying.terminated, false);
  assert.ok(staying.events.every((e) => e.atMs === null));
  const silent = placePodState('igw-c', null, T0);
  assert.deepEqual([silent.state, silent.terminated, silent.answeredAtMs], [null, false, null]);
  assert.equal(silent.events.length, 6);
});

test('podStateFlag: --pod-state needs --spec, --kubectl needs --pod-state', () => {
  assert.equal(podStateFlag(false, undefined, undefined), null);
  assert.equal(podStateFlag(true, 'gw.yaml', undefined), 'kubectl');
  assert.equal(podStateFlag(true, 'gw.yaml', '/opt/kubectl'), '/opt/kubectl');
  assert.throws(
    () => podStateFlag(true, undefined, undefined),
    (e: Error) => e instanceof UsageError && /--pod-state needs --spec/.test(e.message),
  );
  assert.throws(() => podStateFlag(false, 'gw.yaml', 'kubectl'), /--kubectl is used only with --pod-state/);
  assert.throws(() => podStateFlag(true, 'gw.yaml', ' '), /--kubectl is empty/);
});

test("the report with --pod-state: JSON podStates on the termination's clock, the text lists them with the clock caveat, the SVG draws each event", () => {
  const paths = { slow: () => '/', stream: () => '/' };
  const records = [
    { spec: { kind: 'slow' as const, ms: 50 }, startMs: T0 + 10, endMs: T0 + 60, outcome: 'ok' as const, worker: 0, clientPort: 1, reusedConnection: false },
  ];
  const run: VerifyRun = {
    records,
    paths,
    loadStartMs: T0 - 1000,
    loadEndMs: T0 + 4000,
    terminationAt: T0,
    stoppedBy: 'duration',
    terminate: null,
    observe: null,
  };
  const last = new Map<string, PodStateSample>([
    ['igw-a', { answer: parseStateAnswer(stateJson('CLOSING', 'drain-first', [2100, null, 120, 1800, 2600, 9000])), answeredAt: T0 + 3000 }],
  ]);
  const polling = {
    namespace: 'istio-ingress',
    selector: 'app=igw',
    intervalMs: 1000,
    sequenceIntervalMs: 250,
    polls: 9,
    failures: 2,
    lastError: 'igw-a: pods "igw-a" not found',
  };
  const report = verifyReport(
    run,
    summarize(records, T0, paths, null),
    { url: 'http://gw/', scenario: 's5', load: { ratePerSecond: 20, connections: 4, durationMs: 5000, requestTimeoutMs: 30_000 } },
    { pods: ['igw-a', 'igw-b'], last, polling },
  );
  assert.deepEqual(
    report.podStates!.map((p) => [p.pod, p.terminated]),
    [
      ['igw-a', true],
      ['igw-b', false],
    ],
  );
  assert.equal(report.podStatePolling!.failures, 2);
  assert.match(report.podStatePolling!.clock, /pods' clocks/);
  const text = renderVerifyText(report);
  assert.match(text, /9 polls, 2 failed \(last error: igw-a: pods "igw-a" not found\)/);
  assert.match(text, /igw-a: terminated, last state CLOSING, read at \+3\.000 s/);
  assert.match(text, /\[2\] K8s readiness fails\s+- \(not in its last answer\)/);
  assert.match(text, /\[3\] proxy drain starts\s+\+0\.120 s/);
  assert.match(text, /igw-b: not terminated, never answered/);
  assert.match(text, /a skew between the two clocks/);
  const svg = renderVerifySvg(report);
  assert.equal(XMLValidator.validate(svg), true);
  for (const label of ['[1] lb-health-fails (igw-a)', '[3] proxy-drain-starts (igw-a)', '[4] in-flight-zero (igw-a)', '[5] lb-marks-down (igw-a)'])
    assert.ok(svg.includes(label), label);
  assert.ok(!svg.includes('[2] readiness-fails'), 'an event not seen is not drawn');
  assert.ok(!svg.includes('[6] lb-resets-sessions'), 'an event after the plotted span is not drawn');
  // Without --pod-state, no new keys: the JSON is what it was.
  const plain = verifyReport(run, summarize(records, T0, paths, null), { url: 'http://gw/', scenario: 's5', load: report.load });
  assert.ok(!('podStates' in plain) && !('podStatePolling' in plain));
});

/**
 * The load scenario, short (test/proof/load/: the full one is `npm run e2e:load`, docs/e2e/LOAD.md):
 * three real Envoy pods with the real hc behind HAProxy running lb-config's backend, wrk with every
 * request counted by id, one pod deleted kubelet-like per sequence. The rate is a small share of
 * a limit calibrated here and now, so it holds on a loaded machine; the assertions are counts and
 * orders only: the sequence ran in its order, and no request was lost where the plan predicts none.
 */
import assert from 'node:assert/strict';
import { cpus } from 'node:os';
import { test } from 'node:test';
import { pinnedProxies } from '../harness/proxies';
import { calibrate } from './calibrate';
import { LONG, shortRuns } from './plan-runs';
import { LoadLab, runLoad, runName, type LoadRunResult, type PodTimings } from './run';
import { requireTool } from './tools';

/** The short runs ask for this share of the calibrated limit. */
const SHARE = 0.3;
const TARGETS = [200, 400, 800, 1600, 3200];

const before = (what: string, a: number | null, b: number | null): void => {
  assert.ok(a !== null && b !== null, `${what}: both happened (${a}, ${b})`);
  assert.ok(a <= b, `${what}: ${a} ms <= ${b} ms`);
};

/** The sequence ran: drained, reached 0, CLOSED without the drain timeout, the LB took the pod out. */
function assertRan(p: PodTimings): void {
  assert.equal(p.finalState, 'CLOSED', `${p.pod}: the sidecar reached CLOSED (${p.detail.join('; ')})`);
  assert.equal(p.drainTimedOut, false, `${p.pod}: without the drain timeout`);
  assert.notEqual(p.drainStartMs, null, `${p.pod}: [3] the proxy drain started`);
  assert.notEqual(p.zeroMs, null, `${p.pod}: [4] in-flight reached 0`);
  assert.notEqual(p.lbDownMs, null, `${p.pod}: HAProxy marked it DOWN`);
}

function assertOrder(r: LoadRunResult, p: PodTimings): void {
  if (r.sequence === 'drain-first') {
    before('[3] drain before [4] zero', p.drainStartMs, p.zeroMs);
    before('[4] zero before [1] LB 503', p.zeroMs, p.lbFailMs);
    before('[1] LB 503 before DOWN', p.lbFailMs, p.lbDownMs);
  } else if (r.sequence === 'health-first') {
    before('[1] LB 503 before DOWN', p.lbFailMs, p.lbDownMs);
    before('DOWN before [3] drain (the LB buffer covers detection)', p.lbDownMs, p.drainStartMs);
    before('[3] drain before [4] zero', p.drainStartMs, p.zeroMs);
  } else if (r.sequence === 'soft-drain') {
    before('[1] LB 404 before NOLB', p.lbFailMs, p.lbNolbMs);
    before('NOLB before [3] drain', p.lbNolbMs, p.drainStartMs);
    before('[3] drain before [4] zero', p.drainStartMs, p.zeroMs);
    before('[4] zero before DOWN', p.zeroMs, p.lbDownMs);
  }
}

test('under load: each sequence at a share of the calibrated rate, every request counted by id', async (t) => {
  for (const tool of ['wrk', 'haproxy', 'go'] as const) requireTool(tool);
  const versions = pinnedProxies().map((p) => p.version);
  const lab = await LoadLab.start('drain-first', versions[0]!);
  let limit: number;
  try {
    const cal = await calibrate(lab, LONG, TARGETS, 2000, cpus().length);
    t.diagnostic(`calibration on Envoy ${versions[0]}: ${cal.steps.map((s) => `${s.target}->${s.achieved} (${s.why})`).join(', ')}; limit ${cal.limit}/s`);
    limit = cal.limit;
  } finally {
    await lab.stop();
  }
  assert.ok(limit > 0, 'the calibration held at least its first step');
  const rate = Math.max(100, Math.round(limit * SHARE));
  for (const cfg of shortRuns(versions, rate)) {
    await t.test(runName(cfg), async (tt) => {
      const r = await runLoad(cfg);
      tt.diagnostic(
        `${r.requests} requests (${r.longRequests} long), ${r.lost} lost ${JSON.stringify(r.lostByClass)}, ${r.achievedShortRate}/${rate} short req/s, probe p99 ${r.probe.p99Ms} ms; ${JSON.stringify(r.pods[0])}`,
      );
      assert.ok(r.requests > 0 && r.longRequests > 0, 'short and long requests were sent');
      assert.ok(r.achievedShortRate >= 0.3 * rate, `the load ran near its rate (${r.achievedShortRate} of ${rate} req/s)`);
      if (r.sequence === 'article-order') {
        // The contrast: a drain that keeps accepting while the LB endpoint still answers 200 keeps taking new
        // requests after its drain started, so it cannot converge while the LB sends (whether in-flight touched 0
        // at one of the harness's polls is reported in docs/e2e/LOAD.md, not asserted: at a low rate it may).
        for (const p of r.pods) {
          assert.notEqual(p.drainStartMs, null, `${p.pod}: the keep-accepting drain started`);
          assert.ok(p.servedAfterDeletion > 0, `${p.pod}: took new requests after its drain started (${p.servedAfterDeletion})`);
          before('the drain before the LB 503', p.drainStartMs, p.lbFailMs);
        }
        return;
      }
      for (const p of r.pods) {
        assertRan(p);
        assertOrder(r, p);
      }
      if (r.sequence === 'drain-first') {
        // Only the losses its plan predicts: connects cut at DOWN, and resets by the leaving pod's listener close.
        const predicted = new Set(r.predicted.map((f) => f.id));
        assert.ok(predicted.has('drain-first-cuts-connects-at-down'), 'the plan predicts the connects cut at DOWN');
        for (const [cls, n] of Object.entries(r.lostByClass)) {
          if (cls === 'closed unanswered, no HAProxy line') {
            // The listener-close reset: HAProxy's connect completes in the backlog Envoy then closes; HAProxy aborts the server session and closes the client's.
            assert.ok(predicted.has('drain-first-listener-close-reset'), 'the plan predicts the listener-close reset');
            assert.ok(n <= r.lbCounters.srvAbrt, `${n} closed unanswered, at most the ${r.lbCounters.srvAbrt} server sessions HAProxy aborted`);
            continue;
          }
          assert.ok(
            cls === 'cut at DOWN (D)' || cls === 'ended by the leaving pod',
            `${n} lost as ${cls}, which the plan does not predict: ${r.lostSamples.join('; ')}`,
          );
        }
      } else {
        assert.equal(r.lost, 0, `${r.label} behind ${r.lbSetting}: no request lost by id (${r.lostSamples.join('; ')})`);
      }
    });
  }
});

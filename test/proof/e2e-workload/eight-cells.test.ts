/**
 * The 8-cell experiment, reduced for `npm test` (about 25 s of wall time, every cell at once): the
 * eight cells and gracegate's, plus an exec preStop in a distroless image. Short requests run at
 * full scale (their margins are a second); long ones on a clock compressed to 0.5 (10-20 s
 * requests, a 2.5 s preStop, 1-2 s endpoint delays), which keeps every ratio the conclusions
 * rest on: requests far shorter or far longer than the preStop, delays shorter than it, timeouts
 * and grace periods longer than the requests. The full-scale run is report-main.ts.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { experimentCells, extraCells, gracegateCells } from './cells';
import { runCell, type CellResult } from './run-cell';

const SCALE = { short: 1, long: 0.5 } as const;
const results = new Map<string, CellResult>();

function cell(id: string): CellResult {
  const r = results.get(id);
  assert.ok(r, `cell ${id} ran`);
  return r;
}

function describeCell(r: CellResult): string {
  return `${r.id} ${JSON.stringify(r.counts)} removals ${JSON.stringify(r.removals)} pods ${JSON.stringify(r.pods)}`;
}

describe('the 8-cell experiment (reduced)', { timeout: 180_000 }, () => {
  before(async () => {
    const cells = [...experimentCells(), ...gracegateCells(), ...extraCells().filter((c) => c.id === 'D-short')];
    const done = await Promise.all(cells.map((c, i) => runCell(c, { scale: SCALE[c.series], seed: 7000 + i })));
    for (const r of done) results.set(r.id, r);
  });

  it('the rig does what the cells say: with a preStop the endpoint leaves the rules before SIGTERM, without one after', () => {
    for (const id of ['S3', 'S4', 'L3', 'L4', 'G-short', 'G-long']) {
      const r = cell(id);
      assert.ok(r.removals.length === 2 && r.removals.every((x) => x.beforeSigterm), describeCell(r));
      assert.equal(r.closedInRulesSeconds, 0, describeCell(r));
      assert.ok(
        r.pods.filter((p) => p.role === 'old').every((p) => !p.killed),
        `${id}: no SIGKILL`,
      );
    }
    for (const id of ['S1', 'S2', 'L1', 'L2', 'D-short']) {
      assert.ok(
        cell(id).removals.every((x) => !x.beforeSigterm),
        describeCell(cell(id)),
      );
      assert.ok(cell(id).closedInRulesSeconds > 0, describeCell(cell(id)));
    }
    for (const r of results.values()) assert.ok(r.requests > 0, `${r.id} sent requests`);
  });

  it('short requests need the preStop: S1 and S2 lose requests to a closed listener, S3 (preStop only) and S4 lose none', () => {
    assert.ok(cell('S1').counts.refusedReset > 0, describeCell(cell('S1')));
    // Graceful shutdown keeps the requests in flight, but not the new ones the rules still send.
    assert.ok(cell('S2').counts.refusedReset > 0, describeCell(cell('S2')));
    assert.equal(cell('S2').counts.cut, 0, describeCell(cell('S2')));
    assert.equal(cell('S3').failures, 0, describeCell(cell('S3')));
    assert.equal(cell('S4').failures, 0, describeCell(cell('S4')));
  });

  it('long requests need graceful shutdown: L1 and L3 (preStop only) cut requests in flight, L2 (graceful only) and L4 lose none', () => {
    assert.ok(cell('L1').counts.cut > 0, describeCell(cell('L1')));
    assert.ok(cell('L3').counts.cut > 0, describeCell(cell('L3')));
    assert.equal(cell('L3').counts.refusedReset, 0, describeCell(cell('L3')));
    assert.equal(cell('L2').failures, 0, describeCell(cell('L2')));
    assert.equal(cell('L4').failures, 0, describeCell(cell('L4')));
  });

  it("gracegate's plan (native sleep, graceful shutdown, computed grace period) loses nothing in either series", () => {
    for (const id of ['G-short', 'G-long']) {
      const r = cell(id);
      assert.equal(r.preStop, 'sleep 5 (native)');
      assert.equal(r.failures, 0, describeCell(r));
    }
    assert.deepEqual([cell('G-long').shutdownTimeoutSeconds, cell('G-long').terminationGracePeriodSeconds], [40, 50]);
    // The drain waits for the requests in flight, never for the timeout or SIGKILL.
    assert.ok(
      cell('G-long')
        .pods.filter((p) => p.role === 'old')
        .every((p) => p.drainSeconds! < 40 && !p.killed),
      describeCell(cell('G-long')),
    );
  });

  it('an exec preStop in a distroless image fails, and the pod loses what S1 loses', () => {
    const r = cell('D-short');
    assert.ok(
      r.pods.filter((p) => p.role === 'old').every((p) => p.preStopFailed),
      describeCell(r),
    );
    assert.ok(r.counts.refusedReset > 0, describeCell(r));
  });
});

/**
 * Issue 34, attack 4: after a `kill -9` mid-drain, a state file that cannot be parsed, is missing, or
 * is dated far ahead made the restarted sidecar start fresh and answer the LB 200 OPEN while the
 * proxy, already drained, refused every connection (Envoy's /ready still says LIVE). Now a start
 * without a state file to trust answers 503 (FAULT, the reason in /state, counted) until Envoy's
 * listener statistics say whether the drain was sent: sent, the sequence runs to its end (CLOSED);
 * not sent, OPEN. The real sidecar process and the Envoy stand-in, whose listeners the drain stops.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { BOUND_MARGIN_MS, sequenceBoundMs } from '../../src/hc/sequence-context';
import { startEnvoyStandin, type EnvoyStandin } from '../support/envoy-standin';
import { request } from '../support/http';
import { spawnHc, tempStateFile, type SpawnedHc } from '../support/hc';
import { waitFor } from '../support/wait';

const LB_BUFFER = 0.2;
const DRAIN_TIMEOUT = 5;
let standin: EnvoyStandin;
let hc: SpawnedHc | undefined;

// A stand-in of its own for each test: a drained one stays drained.
beforeEach(async () => {
  standin = await startEnvoyStandin({ hcmDrainTimeoutMs: 100 });
});
afterEach(async () => {
  await hc?.stop();
  hc = undefined;
  await standin.stop();
});

const args = (stateFile: string) => [
  '--envoy-admin',
  standin.adminUrl,
  '--state-file',
  stateFile,
  '--poll-interval',
  '0.05',
  '--lb-buffer',
  String(LB_BUFFER),
  '--drain-timeout',
  String(DRAIN_TIMEOUT),
];
const untrustedMetric = async (h: SpawnedHc) =>
  Number(/^gracegate_hc_state_file_untrusted_total (\d+)$/m.exec((await request(`${h.metricsUrl}/metrics`)).body)?.[1]);

/** A sidecar whose drain reached the stand-in (its listeners stopped), then killed with SIGKILL. */
async function drainedThenKilled(stateFile: string): Promise<void> {
  const first = await spawnHc(args(stateFile));
  try {
    await waitFor('OPEN', 5_000, async () => (await first.get('/health_check.html')).status === 200);
    await first.post('/drain?witness=none');
    await waitFor('the drain calls acknowledged', 5_000, async () => (await first.state()).drainAckedAt !== null);
  } finally {
    await first.kill();
  }
}

/** Probes the restarted sidecar until CLOSED: every answer before it must be a 503. */
async function neverOpenUntilClosed(h: SpawnedHc): Promise<string[]> {
  const seen: string[] = [];
  await waitFor('CLOSED', (DRAIN_TIMEOUT + 5) * 1000, async () => {
    const r = await h.get('/health_check.html');
    seen.push(`${r.status} ${r.body}`);
    return r.body === 'CLOSED';
  });
  assert.ok(
    seen.every((a) => a.startsWith('503 ')),
    `the LB heard: ${[...new Set(seen)].join(', ')}`,
  );
  return seen;
}

describe('a state file that cannot be trusted fails closed', () => {
  for (const [label, spoil] of [
    ['unparseable', (f: string) => fs.writeFileSync(f, '{"version": 2, "state": "DRAI')],
    ['missing', (f: string) => fs.rmSync(f)],
    [
      'dated 23 h ahead',
      (f: string) => {
        const p = JSON.parse(fs.readFileSync(f, 'utf8')) as Record<string, unknown>;
        fs.writeFileSync(f, JSON.stringify({ ...p, enteredAt: Date.now() + 23 * 3600_000, sequenceStartedAt: Date.now() + 23 * 3600_000 }));
      },
    ],
  ] as const) {
    test(`${label}, after a kill -9 with the drain sent: 503 from the first answer, FAULT with the reason, then the sequence's end`, async () => {
      const stateFile = tempStateFile();
      await drainedThenKilled(stateFile);
      spoil(stateFile);
      hc = await spawnHc(args(stateFile));
      const first = await hc.get('/health_check.html');
      assert.equal(first.status, 503, `first answer: ${first.status} ${first.body}`);
      const state = await hc.state();
      assert.equal(state.state === 'FAULT' || state.state === 'CLOSED', true, state.state);
      if (label !== 'missing') {
        assert.match(String(state.history[0]?.reason), /the state file cannot be trusted/);
        assert.equal(await untrustedMetric(hc), 1);
      }
      await neverOpenUntilClosed(hc);
      const end = await hc.state();
      assert.equal(end.proxyDrained, true);
      assert.match(String(end.events.find((e) => e.name !== undefined && e.id === 3)?.note), /found drained at start/);
    });
  }

  test('untrusted, but Envoy was never drained: FAULT until Envoy said so, then OPEN', async () => {
    const stateFile = tempStateFile();
    fs.writeFileSync(stateFile, 'not json');
    hc = await spawnHc(args(stateFile));
    await waitFor('OPEN', 5_000, async () => (await hc!.get('/health_check.html')).status === 200);
    const state = await hc.state();
    assert.equal(state.flow, null);
    assert.match(state.history.map((h) => h.reason).join('\n'), /no drain reached it/);
    assert.equal(await untrustedMetric(hc), 1);
  });

  test("a file 30 s ahead (within the clock's skew) is resumed, its remaining wait capped at the sequence's own bound", async () => {
    const stateFile = tempStateFile();
    const first = await spawnHc([...args(stateFile), '--drain-timeout', '600']);
    await waitFor('OPEN', 5_000, async () => (await first.get('/health_check.html')).status === 200).catch(async (err) => {
      await first.kill();
      throw err;
    });
    await first.post('/close-lb').finally(() => first.kill());
    const p = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as Record<string, number>;
    const ahead = Date.now() + 30_000;
    fs.writeFileSync(stateFile, JSON.stringify({ ...p, enteredAt: ahead, sequenceStartedAt: ahead }));
    hc = await spawnHc([...args(stateFile), '--drain-timeout', '600']);
    await hc.post('/drain?witness=none');
    const state = await hc.state();
    const bound = sequenceBoundMs({ lbBufferSeconds: LB_BUFFER, drainTimeoutSeconds: 600 }) + BOUND_MARGIN_MS;
    assert.ok(Date.parse(String(state.finishBy)) <= Date.now() + bound, `finishBy ${state.finishBy}: beyond now + the bound`);
  });
});

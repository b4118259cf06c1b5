/**
 * FAULT end to end: Envoy's admin down, slow or talking garbage. The sidecar never hangs past its
 * bound, never answers 200 while the proxy is gone, says why in /state, and reopens only when no
 * drain had started.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { startEnvoyStandin, type AdminFault, type EnvoyStandin } from '../support/envoy-standin';
import { request } from '../support/http';
import { spawnHc, tempStateFile, type SpawnedHc } from '../support/hc';
import { waitFor } from '../support/wait';

/** poll 50 ms, admin timeout 200 ms, FAULT after 3 failures: a fault shows within ~1 s. */
async function withRig(sequence: string, body: (s: EnvoyStandin, hc: SpawnedHc) => Promise<void>): Promise<void> {
  const standin = await startEnvoyStandin({ hcmDrainTimeoutMs: 100 });
  const config = path.join(path.dirname(tempStateFile()), 'hc.json');
  fs.writeFileSync(config, JSON.stringify({ envoyAdminTimeoutSeconds: 0.2, faultAfterFailures: 3, terminationWitness: { required: false } }));
  let hc: SpawnedHc | undefined;
  try {
    hc = await spawnHc([
      '--config',
      config,
      '--envoy-admin',
      standin.adminUrl,
      '--sequence',
      sequence,
      '--state-file',
      tempStateFile(),
      '--poll-interval',
      '0.05',
      '--lb-buffer',
      '0.3',
      '--drain-timeout',
      '5',
    ]);
    await waitFor('OPEN', 5_000, async () => (await hc!.get('/health_check.html')).status === 200);
    await body(standin, hc);
  } finally {
    await hc?.stop();
    await standin.stop();
  }
}

const cases: { fault: AdminFault; reason: RegExp }[] = [
  { fault: 'down', reason: /GET \/ready: connect ECONNREFUSED/ },
  { fault: 'slow', reason: /GET \/ready: no answer within 200ms/ },
  { fault: 'garbage', reason: /GET \/ready: unexpected answer HTTP 200/ },
];

describe('FAULT while OPEN', () => {
  for (const { fault, reason } of cases) {
    test(`admin ${fault}: 503 FAULT for the LB and readiness, 200 for liveness, reason in /state, back to OPEN after`, async () => {
      await withRig('health-first', async (s, hc) => {
        const since = Date.now();
        await s.setFault(fault, { delayMs: 2000 });
        await waitFor('FAULT', 4000, async () => (await hc.get('/health_check.html')).body === 'FAULT', 10);
        const bound = 3 * (50 + 200) + 1000;
        assert.ok(Date.now() - since < bound, `FAULT within the bound (${Date.now() - since} ms)`);
        const [lb, ready, live] = await Promise.all([hc.get('/health_check.html'), hc.get('/health'), hc.get('/live')]);
        assert.deepEqual([lb.status, ready.status, live.status], [503, 503, 200]);
        assert.deepEqual([lb.body, ready.body, live.body], ['FAULT', 'FAULT', 'FAULT']);
        const state = await hc.state();
        assert.equal(state['state'], 'FAULT');
        assert.match(String(state['reason']), reason);
        assert.match(String(state['reason']), /consecutive failed polls/);
        const metrics = (await request(`${hc.metricsUrl}/metrics`)).body;
        assert.match(metrics, /^gracegate_hc_state\{state="FAULT"\} 1$/m);
        assert.match(metrics, /^gracegate_hc_envoy_poll_errors_total [1-9]\d*$/m);
        await s.setFault('none');
        await waitFor('OPEN again', 4000, async () => (await hc.get('/health_check.html')).status === 200);
        assert.equal((await hc.get('/health')).body, 'OPEN');
      });
    });
  }
});

describe('FAULT during a drain', () => {
  test('drain-first: admin down mid-drain → 503 at once, never 200 again, CLOSED once Envoy reports 0', async () => {
    await withRig('drain-first', async (s, hc) => {
      const inflight = request(`${s.trafficUrl}/slow?ms=1500`);
      await waitFor('in flight', 5_000, () => s.counts().requests === 1);
      assert.equal((await hc.post('/drain')).status, 202);
      await waitFor('proxy drained', 5_000, () => !s.counts().listening);
      assert.equal((await hc.get('/health_check.html')).status, 200);
      await s.setFault('down');
      await waitFor('FAULT', 3000, async () => (await hc.get('/health_check.html')).body === 'FAULT', 10);
      await s.setFault('none');
      const seen = new Set<string>();
      await waitFor(
        'CLOSED',
        5000,
        async () => {
          const r = await hc.get('/health_check.html');
          seen.add(`${r.status} ${r.body}`);
          return r.body === 'CLOSED';
        },
        10,
      );
      assert.equal((await inflight).status, 200);
      assert.ok(![...seen].some((x) => x.startsWith('200')), `never 200 after the fault: ${[...seen]}`);
      const state = await hc.state();
      assert.deepEqual((state['history'] as { state: string }[]).map((h) => h.state).slice(-3), ['DRAINING', 'FAULT', 'CLOSED']);
      const reopen = await hc.post('/reopen');
      assert.equal(reopen.status, 409);
    });
  });
});

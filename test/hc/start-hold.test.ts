/**
 * The start hold on the real sidecar process (issue 50): the LB's first 200 waits for the kubelet's
 * readiness probe and startHold.seconds after it. The kubelet is played from the address
 * GRACEGATE_HOST_IPS names (as the downward API's status.hostIPs does); a stranger on the pod
 * network from 127.0.0.2, whose readiness probes are answered the same but start nothing.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { HOST_IPS_ENV } from '../../src/contract/addresses';
import { startEnvoyStandin, type EnvoyStandin } from '../support/envoy-standin';
import { testDir } from '../support/tmp';
import { request } from '../support/http';
import { spawnHc, tempStateFile, type SpawnedHc } from '../support/hc';
import { waitFor } from '../support/wait';

const HOLD_SECONDS = 0.4;
let standin: EnvoyStandin;
let hc: SpawnedHc;

before(async () => {
  standin = await startEnvoyStandin({});
  const config = join(testDir('gracegate-start-hold-'), 'hc.json');
  writeFileSync(config, JSON.stringify({ startHold: { afterReadiness: true, seconds: HOLD_SECONDS }, pollIntervalSeconds: 0.05 }));
  hc = await spawnHc(['--config', config, '--envoy-admin', standin.adminUrl, '--state-file', tempStateFile()], 5_000, { [HOST_IPS_ENV]: '127.0.0.5' });
});

after(async () => {
  await hc.stop();
  await standin.stop();
});

test("readiness 200 from WARMING; the LB 503 until a kubelet source's readiness probe, then OPEN startHold.seconds later", async () => {
  await waitFor('WARMING', 5_000, async () => ((await hc.state()).state === 'WARMING' ? true : undefined));
  // Loopback is the pod itself, a kubelet source: until the kubelet's turn only the stranger asks
  // for readiness. Its probes are answered 200 like anyone's, and start no hold.
  assert.equal((await hc.get('/health_check.html')).body, 'WARMING');
  for (let i = 0; i < 5; i++) assert.equal((await request(`${hc.healthUrl}/health`, { localAddress: '127.0.0.2' })).status, 200);
  await new Promise((r) => setTimeout(r, HOLD_SECONDS * 1000 * 2));
  assert.equal((await hc.state()).state, 'WARMING', "a stranger's probe does not count as the kubelet's");
  assert.equal((await hc.get('/health_check.html')).status, 503);
  const probed = Date.now();
  assert.equal((await request(`${hc.healthUrl}/health`, { localAddress: '127.0.0.5' })).status, 200);
  await waitFor('OPEN', 5_000, async () => ((await hc.get('/health_check.html')).status === 200 ? true : undefined));
  const opened = Date.parse(String((await hc.state()).history.find((h) => h.state === 'OPEN')?.at));
  assert.ok(opened - probed >= HOLD_SECONDS * 1000 - 5, `OPEN ${opened - probed} ms after the kubelet's probe, hold ${HOLD_SECONDS * 1000} ms`);
  assert.ok(hc.logs.some((l) => l['msg'] === "the kubelet's readiness probe was answered 200" && l['source'] === '127.0.0.5'));
});

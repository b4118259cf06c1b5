/**
 * Restart safety end to end: a sidecar killed mid-sequence resumes from its state file (never 200
 * again, original timeline kept), and a restart of a healthy pod's sidecar — whose preStop runs
 * `gracegate drain` too (contour#4851) — does not drain it, while a real pod termination (istio-
 * proxy's preStop waiting on /wait-closed) does.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { startEnvoyStandin } from '../support/envoy-standin';
import { REPO_ROOT } from '../support/repo';
import { eventTimes, fastDrainFirst, spawnHc, tempStateFile, type SpawnedHc } from '../support/hc';
import { request } from '../support/http';
import { waitFor } from '../support/wait';
import { sidecarTargets, takesNewConnections } from './proxy-targets';

function runDrain(args: string[], timeoutMs = 15_000): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'gracegate.js'), 'drain', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`gracegate drain did not exit within ${timeoutMs}ms: ${stderr}`));
    }, timeoutMs);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, ms: Date.now() - started });
    });
  });
}

/** A GET /wait-closed held open, like the kubelet's httpGet preStop of istio-proxy. */
function holdWaitClosed(hc: SpawnedHc) {
  const controller = new AbortController();
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.get(`${hc.witnessUrl}/wait-closed`, { agent: false, signal: controller.signal }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
  answer.catch(() => {});
  return { answer, cancel: () => controller.abort() };
}

const portOf = (url: string) => new URL(url).port;

describe('restart mid-sequence', { concurrency: 3 }, () => {
  for (const target of sidecarTargets()) {
    test(`${target.label}: a sidecar killed in CLOSING comes back CLOSING (never 200) and keeps the original timeline`, async () => {
      const proxy = await target.start({ hcmDrainTimeoutMs: 300 });
      const stateFile = tempStateFile();
      // The LB buffer outlasts a restart even on a loaded machine (node's start-up took over 1.2 s at
      // load average 15, and a 2 s buffer then ended before the first answer: DRAINING, not CLOSING).
      const args = [
        '--envoy-admin',
        proxy.adminUrl,
        '--sequence',
        'health-first',
        '--state-file',
        stateFile,
        '--poll-interval',
        '0.05',
        '--lb-buffer',
        '6',
        '--drain-timeout',
        '5',
      ];
      let hc: SpawnedHc | undefined;
      try {
        hc = await spawnHc(args);
        await waitFor('OPEN', 5_000, async () => (await hc!.get('/health_check.html')).status === 200);
        assert.equal((await hc.post('/drain?witness=none')).status, 202);
        const closingAt = Date.now();
        assert.equal((await hc.get('/health_check.html')).body, 'CLOSING');
        await new Promise((r) => setTimeout(r, 800)); // part of the 6 s LB buffer passes before the crash
        await hc.kill();

        hc = await spawnHc(args);
        const first = await hc.get('/health_check.html');
        assert.deepEqual([first.status, first.body], [503, 'CLOSING'], 'the first answer after the restart is the resumed state');
        assert.ok(hc.logs.some((l) => l['msg'] === 'resuming from the state file'));
        const seen = new Set<number>();
        await waitFor(
          'CLOSED',
          10000,
          async () => {
            const r = await hc!.get('/health_check.html');
            seen.add(r.status);
            return r.body === 'CLOSED';
          },
          20,
        );
        assert.ok(!seen.has(200), 'never 200 again');
        const e = eventTimes(await hc.state());
        assert.ok(Math.abs(e[1]!.at! - closingAt) < 300, '[1] is the original one');
        const buffer = e[3]!.at! - e[1]!.at!;
        assert.ok(buffer >= 6000 && buffer < 6700, `the drain went out 6 s after the original [1], not 6 s after the restart (${buffer} ms)`);
        assert.equal(await takesNewConnections(proxy.trafficPort), false, 'the resumed sidecar drained the proxy');
        assert.equal(proxy.alive(), true);
      } finally {
        await hc?.stop();
        await proxy.stop();
      }
    });
  }
});

describe('termination witness', () => {
  test('a sidecar restart (preStop without a pod termination) does not drain; a pod termination does', async () => {
    const standin = await startEnvoyStandin({ hcmDrainTimeoutMs: 100 });
    const stateFile = tempStateFile();
    // As in the pod: both containers read the same file; the witness is required (the default).
    const config = path.join(path.dirname(stateFile), 'hc.json');
    fs.writeFileSync(config, JSON.stringify({ terminationWitness: { windowSeconds: 0.5 } }));
    const args = [
      '--config',
      config,
      '--envoy-admin',
      standin.adminUrl,
      '--sequence',
      'drain-first',
      '--state-file',
      stateFile,
      '--poll-interval',
      '0.05',
      '--lb-buffer',
      '0.3',
      '--drain-timeout',
      '5',
    ];
    let hc: SpawnedHc | undefined;
    try {
      // A GET /wait-closed held by someone out there changes nothing on its own.
      hc = await spawnHc(args);
      await waitFor('OPEN', 5_000, async () => (await hc!.get('/health_check.html')).status === 200);
      const outsider = holdWaitClosed(hc);
      await waitFor('waiter registered', 5_000, async () => (await hc!.state())['waiters'] === 1);
      assert.equal((await hc.get('/health_check.html')).status, 200);
      outsider.cancel();
      await waitFor('waiter gone', 5_000, async () => (await hc!.state())['waiters'] === 0);

      // Liveness restart: kubelet runs the hc container's preStop (gracegate drain), nothing else.
      const declined = await runDrain(['--config', config, '--control-port', portOf(hc.controlUrl)]);
      assert.equal(declined.code, 0);
      assert.match(declined.stderr, /no pod termination witnessed \(container restart\?\), not draining/);
      assert.equal((await hc.get('/health_check.html')).status, 200);
      assert.deepEqual(
        standin.adminCalls.filter((c) => c.path.startsWith('/drain')),
        [],
        'Envoy was never told to drain',
      );
      assert.equal(await hc.stop(), 0, 'SIGTERM after the preStop: clean exit');
      hc = await spawnHc(args);
      await waitFor('OPEN after the restart', 5_000, async () => (await hc!.get('/health_check.html')).status === 200);

      // Pod deletion: istio-proxy's preStop (GET /wait-closed) and the hc preStop run together.
      const inflight = request(`${standin.trafficUrl}/slow?ms=400`);
      await waitFor('in flight', 5_000, () => standin.counts().requests === 1);
      const drain = runDrain(['--config', config, '--control-port', portOf(hc.controlUrl)]);
      await new Promise((r) => setTimeout(r, 100)); // the kubelet's hooks start in either order
      const istioProxyPreStop = holdWaitClosed(hc);
      const result = await drain;
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, /pod termination witnessed/);
      assert.match(result.stderr, /finished in/);
      assert.deepEqual(await istioProxyPreStop.answer, { status: 200, body: 'CLOSED' });
      assert.equal((await inflight).status, 200);
      assert.deepEqual((await hc.get('/health_check.html')).status, 503);
      assert.deepEqual(
        standin.adminCalls.filter((c) => c.path.startsWith('/drain')).map((c) => c.path),
        ['/drain_listeners', '/drain_listeners?graceful'],
      );
    } finally {
      await hc?.stop();
      await standin.stop();
    }
  });

  test("the hc's httpGet preStop (GET /hc-stopping on the witness port): alone (a restart) it answers at once and drains nothing; with istio-proxy's /wait-closed it drains and answers at CLOSED", async () => {
    const standin = await startEnvoyStandin({ hcmDrainTimeoutMs: 100 });
    const stateFile = tempStateFile();
    const config = path.join(path.dirname(stateFile), 'hc.json');
    fs.writeFileSync(config, JSON.stringify({ terminationWitness: { windowSeconds: 0.5 } }));
    const args = [
      '--config',
      config,
      '--envoy-admin',
      standin.adminUrl,
      '--sequence',
      'drain-first',
      '--state-file',
      stateFile,
      '--poll-interval',
      '0.05',
      '--lb-buffer',
      '0.3',
      '--drain-timeout',
      '5',
    ];
    let hc: SpawnedHc | undefined;
    const hook = (h: SpawnedHc) => request(`${h.witnessUrl}/hc-stopping`);
    try {
      hc = await spawnHc(args);
      await waitFor('OPEN', 5_000, async () => (await hc!.get('/health_check.html')).status === 200);
      // A restart of the hc alone: the kubelet runs its preStop and nothing else.
      const started = Date.now();
      const alone = await hook(hc);
      assert.equal(alone.status, 200);
      assert.match(alone.body, /^not draining: no pod termination witnessed/);
      assert.ok(Date.now() - started < 3000, 'answered after the witness window, not at a sequence bound');
      assert.equal((await hc.get('/health_check.html')).status, 200);
      assert.deepEqual(
        standin.adminCalls.filter((c) => c.path.startsWith('/drain')),
        [],
        'Envoy was never told to drain',
      );

      // The pod's deletion: both hooks, in either order.
      const inflight = request(`${standin.trafficUrl}/slow?ms=400`);
      await waitFor('in flight', 5_000, () => standin.counts().requests === 1);
      const hcHook = hook(hc);
      await new Promise((r) => setTimeout(r, 100));
      const istioProxyPreStop = holdWaitClosed(hc);
      const hcAnswer = await hcHook;
      assert.deepEqual([hcAnswer.status, hcAnswer.body], [200, 'CLOSED']);
      assert.deepEqual(await istioProxyPreStop.answer, { status: 200, body: 'CLOSED' });
      assert.equal((await inflight).status, 200);
      assert.equal((await hc.get('/health_check.html')).status, 503);
      assert.deepEqual(
        standin.adminCalls.filter((c) => c.path.startsWith('/drain')).map((c) => c.path),
        ['/drain_listeners', '/drain_listeners?graceful'],
      );
    } finally {
      await hc?.stop();
      await standin.stop();
    }
  });

  test('gracegate drain --no-witness drains at once; drain exits 2 when the sidecar cannot be reached, as state does', async () => {
    const standin = await startEnvoyStandin({ hcmDrainTimeoutMs: 100 });
    let hc: SpawnedHc | undefined;
    try {
      hc = await spawnHc([...fastDrainFirst(standin.adminUrl)]);
      await waitFor('OPEN', 5_000, async () => (await hc!.get('/health_check.html')).status === 200);
      const port = portOf(hc.controlUrl);
      const done = await runDrain(['--control-port', port, '--no-witness']);
      assert.equal(done.code, 0, done.stderr);
      assert.equal((await hc.state())['state'], 'CLOSED');
      const again = await runDrain(['--control-port', port, '--no-witness']);
      assert.equal(again.code, 0, 'idempotent');
      await hc.stop();
      const unreachable = await runDrain(['--control-port', port], 15_000);
      assert.equal(unreachable.code, 2, 'unreachable is exit 2 for every command (src/cli/args.ts EXIT)');
      assert.match(unreachable.stderr, /cannot be reached/);
    } finally {
      await hc?.stop();
      await standin.stop();
    }
  });
});

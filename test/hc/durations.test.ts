/**
 * Durations the runtime cannot honour (issue 18, attacks 1 and 2): Node's timers hold 2^31-1 ms and
 * fire a longer delay after 1 ms; a Date holds ±8.64e15 ms and toISOString throws beyond. Every
 * duration is bounded where it enters (flags, the hc config, the spec, the plan's derived timings),
 * and the sidecar's timers are chained for the sums of bounded values that exceed one timer.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { wallClock } from '../../src/hc/clock';
import { MAX_DURATION_SECONDS, MAX_TIMER_MS, parseDurationSeconds } from '../../src/core/duration';
import { startEnvoyStandin, type EnvoyStandin } from '../support/envoy-standin';
import { runCli } from '../support/run-cli';
import { REPO_ROOT } from '../support/repo';
import { request } from '../support/http';
import { spawnHc, tempStateFile, type SpawnedHc } from '../support/hc';
import { waitFor } from '../support/wait';

const SPEC = fs.readFileSync(path.join(REPO_ROOT, 'examples/haproxy.yaml'), 'utf8');

function specFile(text: string): string {
  const file = path.join(path.dirname(tempStateFile()), 'gateway.yaml');
  fs.writeFileSync(file, text);
  return file;
}

describe('bounds where durations enter', () => {
  test('the bound is the longest Node timer, in whole seconds', () => {
    assert.equal(MAX_TIMER_MS, 2_147_483_647);
    assert.equal(MAX_DURATION_SECONDS, 2_147_483);
    assert.equal(parseDurationSeconds(MAX_DURATION_SECONDS), MAX_DURATION_SECONDS);
    assert.throws(() => parseDurationSeconds('1000h'), /'1000h' is longer than 2147483s/);
    assert.throws(() => parseDurationSeconds(1e13), /longer than 2147483s/);
  });

  test('hc flags: exit 2 naming the flag', () => {
    for (const [flag, value] of [
      ['--drain-timeout', '9999999999999s'],
      ['--drain-timeout', '1000h'],
      ['--lb-buffer', '1000h'],
      ['--poll-interval', '1000h'],
    ] as const) {
      const r = runCli(['hc', flag, value, '--health-port', '0', '--control-port', '0', '--state-file', tempStateFile()], { timeoutMs: 10_000 });
      assert.equal(r.status, 2, `${flag} ${value}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`${flag}: duration '${value}' is longer than 2147483s`));
    }
  });

  test('hc config file: exit 2 naming the field', () => {
    const dir = path.dirname(tempStateFile());
    for (const [field, config] of [
      ['drainTimeoutSeconds', { drainTimeoutSeconds: 1e13 }],
      ['lbBufferSeconds', { lbBufferSeconds: 3_600_000 }],
      ['pollIntervalSeconds', { pollIntervalSeconds: 3_600_000 }],
      ['envoyAdminTimeoutSeconds', { envoyAdminTimeoutSeconds: 1e9 }],
      ['terminationWitness.windowSeconds', { terminationWitness: { windowSeconds: 1e9 } }],
    ] as const) {
      const file = path.join(dir, `${field}.json`);
      fs.writeFileSync(file, JSON.stringify(config));
      const r = runCli(['hc', '--config', file, '--health-port', '0', '--control-port', '0', '--state-file', tempStateFile()], { timeoutMs: 10_000 });
      assert.equal(r.status, 2, `${field}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`${field.replace('.', '\\.')} must be at most 2147483 seconds`));
    }
  });

  test('spec: a duration beyond the bound is exit 2 naming the field and line; plan and synth write nothing', () => {
    const file = specFile(`${SPEC}  drain: {timeout: 1e13}\n`);
    const line = SPEC.split('\n').length;
    const plan = runCli(['plan', file]);
    assert.equal(plan.status, 2, plan.stderr);
    assert.equal(plan.stdout, '');
    assert.match(plan.stderr, new RegExp(`gateway\\.yaml:${line}: spec\\.drain\\.timeout: duration 10000000000000 is longer than 2147483s`));
    const out = path.join(path.dirname(file), 'out');
    const synth = runCli(['synth', file, '--out', out]);
    assert.equal(synth.status, 2, synth.stderr);
    assert.equal(fs.existsSync(out), false);
  });

  test('plan: a derived timing beyond the bound (1.2 x p99) is exit 2 naming the timing and the spec field', () => {
    const file = specFile(SPEC.replace(/longRequestP99Seconds: \d+/, 'longRequestP99Seconds: 2000000'));
    const r = runCli(['plan', file]);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(
      r.stderr,
      /drainTimeoutSeconds = max\(ceil\(1\.2 x longRequestP99Seconds\).* = 2400000s is longer than 2147483s .*lower spec\.traffic\.longRequestP99Seconds/,
    );
  });
});

describe('timers longer than one Node timer', () => {
  test('a wait beyond 2^31-1 ms is a chain of timers, none longer than Node holds, firing at the end', () => {
    let wall = 0;
    const queue: Array<{ fn: () => void; ms: number }> = [];
    const clock = wallClock(() => wall, {
      setTimeout: (fn, ms) => {
        const t = { fn, ms };
        queue.push(t);
        return t;
      },
      clearTimeout: () => {},
    });
    const total = 3 * MAX_TIMER_MS + 1234;
    let fired = false;
    clock.setTimer(total, () => (fired = true));
    const armed: number[] = [];
    while (queue.length > 0 && !fired) {
      const t = queue.shift()!;
      armed.push(t.ms);
      wall += t.ms;
      t.fn();
    }
    assert.ok(
      armed.every((ms) => ms <= MAX_TIMER_MS),
      `armed ${armed.join(', ')}`,
    );
    assert.deepEqual(armed, [MAX_TIMER_MS, MAX_TIMER_MS, MAX_TIMER_MS, 1234]);
    assert.equal(fired, true);
    assert.equal(wall, total);
  });

  test('with the real Node timers, a 2^31 ms wait does not fire after 1 ms', async () => {
    let fired = false;
    const cancel = wallClock().setTimer(MAX_TIMER_MS + 1, () => (fired = true));
    await new Promise((r) => setTimeout(r, 50));
    cancel();
    assert.equal(fired, false);
  });
});

describe('the real sidecar at the longest durations it accepts', () => {
  let standin: EnvoyStandin;
  let hc: SpawnedHc;
  const max = String(MAX_DURATION_SECONDS);

  before(async () => {
    standin = await startEnvoyStandin({ hcmDrainTimeoutMs: 100 });
    hc = await spawnHc([
      '--envoy-admin',
      standin.adminUrl,
      '--sequence',
      'drain-first',
      '--state-file',
      tempStateFile(),
      '--poll-interval',
      '0.05',
      '--drain-timeout',
      max,
      '--lb-buffer',
      max,
    ]);
    await waitFor('OPEN', 5_000, async () => (await hc.get('/health_check.html')).status === 200);
  });

  after(async () => {
    await hc.stop();
    await standin.stop();
  });

  test('POST /drain, GET /state and a waiting /wait-closed answer (no RangeError), and the waiter keeps waiting', async () => {
    const drain = await hc.post('/drain?witness=none');
    assert.equal(drain.status, 202, drain.body);
    const finishBy = Date.parse(JSON.parse(drain.body).finishBy as string);
    const bound = (2 * MAX_DURATION_SECONDS + MAX_DURATION_SECONDS) * 1000;
    assert.ok(finishBy > Date.now() + bound - 60_000, `finishBy ${new Date(finishBy).toISOString()}`);
    await waitFor('CLOSING (in-flight 0, now waiting the 24.8-day LB buffer)', 5_000, async () => (await hc.state())['state'] === 'CLOSING');
    // The waiter's bound (window + 2 x buffer + drain timeout + 5 s) is above 2^31-1 ms: an unchained
    // timer would answer 504 after 1 ms.
    const waiter = request(`${hc.witnessUrl}/wait-closed`, { timeoutMs: 400 });
    await assert.rejects(waiter, (err: Error) => err.name === 'TimeoutError' || err.name === 'AbortError', 'still waiting after 400 ms');
    const state = await hc.state();
    assert.equal(state['state'], 'CLOSING');
    assert.equal(typeof state['finishBy'], 'string');
    assert.equal(hc.proc.exitCode, null, 'the sidecar is still running');
  });
});

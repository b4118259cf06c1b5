/**
 * The state file as an attacker (or a hand edit) leaves it (issue 18, attack 9): a file that is JSON
 * of the right shape but holds times a Date cannot hold, or times that would make a resumed wait
 * endless, is refused and the sidecar starts fresh, as documented, instead of crashing at start or
 * on the first GET /state.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { describe, test } from 'node:test';
import { fileStateStore, MAX_FUTURE_MS, UNTRUSTED_LOG } from '../../src/hc/state-file';
import type { PersistedState } from '../../src/hc/types';
import { startEnvoyStandin } from '../support/envoy-standin';
import { HcMachine } from '../../src/hc/machine';
import { FakeClock, FakeEnvoy, collectingLogger, testConfig } from './fakes';
import { spawnHc, tempStateFile } from '../support/hc';
import { waitFor } from '../support/wait';

const NOW = Date.UTC(2026, 5, 1);

/** A valid file of a started drain-first sequence, in CLOSING. */
function closing(overrides: Partial<PersistedState> = {}): PersistedState {
  return {
    version: 2,
    state: 'CLOSING',
    enteredAt: NOW - 1_000,
    reason: 'in-flight reached 0',
    flow: 'drain-first',
    sequenceStartedAt: NOW - 3_000,
    bufferStartedAt: NOW - 1_000,
    drainAckedAt: NOW - 2_900,
    drainTimedOut: false,
    events: {
      lbHealthFails: { at: NOW - 1_000, estimated: false },
      readinessFails: null,
      proxyDrainStarts: { at: NOW - 3_000, estimated: false },
      inFlightZero: { at: NOW - 1_000, estimated: false },
      lbMarksDown: null,
      lbResetsSessions: null,
    },
    history: [{ state: 'CLOSING', at: NOW - 1_000, reason: 'in-flight reached 0' }],
    ...overrides,
  };
}

function load(state: unknown): { loaded: PersistedState | undefined; errors: string[] } {
  const file = tempStateFile();
  fs.writeFileSync(file, JSON.stringify(state));
  const { lines, log } = collectingLogger();
  const loaded = fileStateStore(file, log, () => NOW).load();
  return { loaded, errors: lines.filter((l) => l.level === 'error').map((l) => `${l.msg}: ${String(l.fields?.['error'])}`) };
}

describe('times in the state file', () => {
  test('a valid file loads', () => {
    assert.deepEqual(load(closing()).loaded, closing());
  });

  test('times a Date cannot hold, before 1970 or more than a minute ahead are not trusted (logged)', () => {
    const cases: Array<[string, Partial<PersistedState>]> = [
      ['enteredAt', { enteredAt: 1e300 }],
      ['sequenceStartedAt', { sequenceStartedAt: -1e17 }],
      ['bufferStartedAt', { bufferStartedAt: NOW + MAX_FUTURE_MS + 1 }],
      ['events', { events: { ...closing().events, lbHealthFails: { at: 9e15, estimated: false } } }],
      ['history', { history: [{ state: 'CLOSING', at: -1, reason: 'x' }] }],
    ];
    for (const [field, patch] of cases) {
      const { loaded, errors } = load(closing(patch));
      assert.equal(loaded, undefined, field);
      assert.match(errors.join('\n'), new RegExp(`the state file cannot be trusted; FAULT until Envoy says whether the drain was sent: .*${field}`), field);
    }
  });

  test('the real sidecar on such a file: starts fresh, answers /state, and starts fresh again after a restart', async () => {
    const standin = await startEnvoyStandin({});
    const stateFile = tempStateFile();
    fs.writeFileSync(stateFile, JSON.stringify(closing({ enteredAt: 1e300, sequenceStartedAt: -1e17, bufferStartedAt: Date.now() })));
    const args = ['--envoy-admin', standin.adminUrl, '--state-file', stateFile, '--poll-interval', '0.05'];
    try {
      for (let run = 0; run < 2; run++) {
        const hc = await spawnHc(args);
        try {
          assert.ok(hc.logs.some((l) => l['msg'] === UNTRUSTED_LOG) || run === 1);
          const state = await hc.state();
          assert.equal(state['flow'], null, 'a fresh start, no resumed sequence');
          await waitFor('OPEN', 5_000, async () => (await hc.get('/health_check.html')).status === 200);
        } finally {
          assert.equal(await hc.stop(), 0, 'a clean exit, no crash');
        }
      }
    } finally {
      await standin.stop();
    }
  });
});

describe('the state file format version', () => {
  test('a version 1 file (events in an array) is not resumed: the sidecar starts fresh and says why, as for an unreadable file', () => {
    const { events, ...rest } = closing();
    const v1 = { ...rest, version: 1, events: [events.lbHealthFails, null, events.proxyDrainStarts, events.inFlightZero, null, null] };
    const { loaded, errors } = load(v1);
    assert.equal(loaded, undefined);
    assert.match(
      errors.join('\n'),
      /the state file cannot be trusted; FAULT until Envoy says whether the drain was sent: version: written in another format \(this sidecar reads version 2\)/,
    );
  });

  test('what the machine writes, the store reads back: version 2, events by name', async () => {
    const file = tempStateFile();
    const clock = new FakeClock(NOW);
    const { log } = collectingLogger();
    const machine = new HcMachine({
      config: testConfig({ sequence: 'drain-first' }),
      clock,
      envoy: new FakeEnvoy(),
      store: fileStateStore(file, log, clock.now),
      log,
    });
    machine.start();
    await clock.advance(0);
    await machine.requestDrain({ witness: false });
    machine.stop();
    const loaded = fileStateStore(file, log, clock.now).load();
    assert.equal(loaded?.version, 2);
    assert.equal(loaded.flow, 'drain-first');
    assert.equal(loaded.events.proxyDrainStarts?.at, NOW);
    assert.deepEqual(Object.keys(loaded.events), ['lbHealthFails', 'readinessFails', 'proxyDrainStarts', 'inFlightZero', 'lbMarksDown', 'lbResetsSessions']);
  });
});

describe('a state file where nothing can be written', () => {
  test("under /proc: the sidecar starts and answers, and says it cannot write (Node's recursive mkdir loops there)", async () => {
    const hc = await spawnHc(['--state-file', '/proc/gracegate-test/state.json', '--envoy-admin', 'http://127.0.0.1:9']);
    try {
      assert.equal((await hc.get('/live')).status, 200);
      assert.ok(hc.logs.some((l) => l['msg'] === 'could not write the state file' && /ENOENT/.test(String(l['error']))));
    } finally {
      assert.equal(await hc.stop(), 0);
    }
  });
});

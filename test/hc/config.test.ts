/** The hc config schema: defaults, strictness, cross-field rules, file + flag merging. */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { hcConfigSchema } from '../../src/contract/hc-config';
import { HcConfigError, readHcConfig } from '../../src/hc/config-file';
import { tempStateFile } from '../support/hc';

test('an empty object gives every default', () => {
  const c = hcConfigSchema.parse({});
  assert.equal(c.sequence, 'health-first');
  assert.equal(c.drainTimeoutSeconds, 120);
  assert.equal(c.lbBufferSeconds, 10);
  assert.equal(c.pollIntervalSeconds, 1);
  assert.deepEqual(c.softSignal, { status: 404 });
  assert.equal(c.envoyAdmin, 'http://127.0.0.1:15000');
  assert.equal(c.envoyAdminTimeoutSeconds, 1);
  assert.equal(c.faultAfterFailures, 3);
  assert.equal(c.healthPort, 18180);
  assert.equal(c.controlPort, 18181);
  assert.equal(c.stateFile, '/var/run/gracegate/state.json');
  assert.deepEqual(c.counting.include, ['^listener\\..+\\.downstream_cx_active$']);
  assert.deepEqual(c.terminationWitness, { required: true, windowSeconds: 10, allowFrom: [] });
});

test('unknown keys, bad regexes and ambiguous soft signals are errors on the right path', () => {
  const typo = hcConfigSchema.safeParse({ drainTimeout: 5 });
  assert.ok(!typo.success);
  const regex = hcConfigSchema.safeParse({ counting: { include: ['(unclosed'] } });
  assert.ok(!regex.success && regex.error.issues[0]!.path.join('.') === 'counting.include.0');
  const lookahead = hcConfigSchema.safeParse({ counting: { exclude: ['^(?!listener)'] } });
  assert.ok(!lookahead.success && /RE2/.test(lookahead.error.issues[0]!.message));
  const soft503 = hcConfigSchema.safeParse({ softSignal: { status: 503 } });
  assert.ok(!soft503.success && soft503.error.issues[0]!.path.join('.') === 'softSignal.status');
  const soft200 = hcConfigSchema.safeParse({ softSignal: { status: 200 } });
  assert.ok(!soft200.success && soft200.error.issues[0]!.path.join('.') === 'softSignal.body');
  assert.ok(hcConfigSchema.safeParse({ softSignal: { status: 200, body: 'DISABLED' } }).success);
  assert.ok(hcConfigSchema.safeParse({ softSignal: { status: 299 } }).success, 'Citrix -trofsCode 299 matches on the code alone');
});

test('flags override the file, softSignal field by field', () => {
  const file = path.join(path.dirname(tempStateFile()), 'hc.json');
  fs.writeFileSync(file, JSON.stringify({ sequence: 'soft-drain', softSignal: { status: 404, body: 'TROFS' }, lbBufferSeconds: 15 }));
  const c = readHcConfig(file, { lbBufferSeconds: 2, softSignal: { status: 410 } });
  assert.equal(c.sequence, 'soft-drain');
  assert.equal(c.lbBufferSeconds, 2);
  assert.deepEqual(c.softSignal, { status: 410, body: 'TROFS' });
  fs.writeFileSync(file, '{"sequence": "sideways"}');
  assert.throws(
    () => readHcConfig(file),
    (err: unknown) => err instanceof HcConfigError && err.problems.some((p) => p.path === 'sequence'),
  );
  fs.writeFileSync(file, '{not json');
  assert.throws(() => readHcConfig(file), /not valid JSON/);
});

test('faultAfterFailures is bounded, and so is the time a dead Envoy can be answered 200 (attack 14)', () => {
  const huge = hcConfigSchema.safeParse({ faultAfterFailures: 1_000_000_000 });
  assert.ok(!huge.success && huge.error.issues.some((i) => i.path.join('.') === 'faultAfterFailures' && /at most 10/.test(i.message)));
  const slow = hcConfigSchema.safeParse({ faultAfterFailures: 10, pollIntervalSeconds: 5, envoyAdminTimeoutSeconds: 2 });
  assert.ok(!slow.success);
  assert.match(slow.error.issues[0]!.message, /10 x \(5 \+ 2\) = 70s: a dead Envoy would be answered 200 that long; at most 60s/);
  assert.ok(hcConfigSchema.safeParse({ faultAfterFailures: 10, pollIntervalSeconds: 4, envoyAdminTimeoutSeconds: 2 }).success, '60 s is allowed');
  const file = path.join(path.dirname(tempStateFile()), 'hc.json');
  fs.writeFileSync(file, JSON.stringify({ faultAfterFailures: 1_000_000_000 }));
  assert.throws(
    () => readHcConfig(file),
    (err: unknown) => err instanceof HcConfigError && err.problems.some((p) => p.message.includes('faultAfterFailures must be at most 10')),
  );
});

test('the three ports must differ (0, any free port, excepted)', () => {
  const clash = hcConfigSchema.safeParse({ healthPort: 18180, witnessPort: 18180 });
  assert.ok(!clash.success && clash.error.issues[0]!.path.join('.') === 'witnessPort');
  assert.ok(hcConfigSchema.safeParse({ healthPort: 0, controlPort: 0, witnessPort: 0 }).success);
});

test('terminationWitness.allowFrom takes addresses and CIDR blocks, and names what it refuses', () => {
  const ok = hcConfigSchema.parse({ terminationWitness: { allowFrom: ['10.0.0.1', '10.244.0.0/16', 'fd00::/8'] } });
  assert.deepEqual(ok.terminationWitness.allowFrom, ['10.0.0.1', '10.244.0.0/16', 'fd00::/8']);
  for (const [bad, message] of [
    ['node-1', "'node-1' is not an IP address or CIDR block"],
    ['10.0.0.0/33', "'10.0.0.0/33': the prefix length must be 0-32"],
  ] as const) {
    const r = hcConfigSchema.safeParse({ terminationWitness: { allowFrom: [bad] } });
    assert.equal(r.success, false);
    assert.match(JSON.stringify(r.error?.issues), new RegExp(message.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')));
  }
});

/** The hc config schema: defaults, strictness, cross-field rules, file + flag merging. */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { hcConfigSchema } from '../../src/hc/config';
import { HcConfigError, readHcConfig } from '../../src/hc/config-file';
import { tempStateFile } from './helpers';

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
  assert.deepEqual(c.terminationWitness, { required: true, windowSeconds: 10 });
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
  assert.throws(() => readHcConfig(file), (err: unknown) => err instanceof HcConfigError && err.problems.join('\n').includes('sequence'));
  fs.writeFileSync(file, '{not json');
  assert.throws(() => readHcConfig(file), /not valid JSON/);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DurationError, formatSeconds, parseDurationSeconds } from '../src/duration';

test('numbers are seconds; strings carry ms, s, m or h', () => {
  assert.equal(parseDurationSeconds(3), 3);
  assert.equal(parseDurationSeconds('500ms'), 0.5);
  assert.equal(parseDurationSeconds('2s'), 2);
  assert.equal(parseDurationSeconds('1.5m'), 90);
  assert.equal(parseDurationSeconds('1h'), 3600);
  assert.equal(parseDurationSeconds(' 250 ms '), 0.25);
});

test('bad durations name the offending text', () => {
  assert.throws(() => parseDurationSeconds('2 minutes'), (e: Error) => e instanceof DurationError && e.message.includes("'2 minutes'"));
  assert.throws(() => parseDurationSeconds('-1s'), DurationError);
  assert.throws(() => parseDurationSeconds(-1), /non-negative/);
  assert.throws(() => parseDurationSeconds(Number.NaN), DurationError);
});

test('formatSeconds prints sub-second values in ms', () => {
  assert.equal(formatSeconds(0.5), '500ms');
  assert.equal(formatSeconds(12), '12s');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Duration, DurationError, formatSeconds, parseDurationSeconds, roundSeconds } from '../../src/core/duration';

test('numbers are seconds; strings carry ms, s, m or h', () => {
  assert.equal(parseDurationSeconds(3), 3);
  assert.equal(parseDurationSeconds('500ms'), 0.5);
  assert.equal(parseDurationSeconds('2s'), 2);
  assert.equal(parseDurationSeconds('1.5m'), 90);
  assert.equal(parseDurationSeconds('1h'), 3600);
  assert.equal(parseDurationSeconds(' 250 ms '), 0.25);
});

test('bad durations name the offending text', () => {
  assert.throws(
    () => parseDurationSeconds('2 minutes'),
    (e: Error) => e instanceof DurationError && e.message.includes("'2 minutes'"),
  );
  assert.throws(() => parseDurationSeconds('-1s'), DurationError);
  assert.throws(() => parseDurationSeconds(-1), /non-negative/);
  assert.throws(() => parseDurationSeconds(Number.NaN), DurationError);
});

test('formatSeconds prints sub-second values in ms', () => {
  assert.equal(formatSeconds(0.5), '500ms');
  assert.equal(formatSeconds(12), '12s');
});

test('one Duration writes a value the way each consumer reads it', () => {
  const half = Duration.seconds(0.5);
  assert.deepEqual([half.toString(), half.inWholeUnits(), half.forPeople(), half.wholeSecondsUp, half.ms], ['0.5s', '500ms', '500ms', 1, 500]);
  const d = Duration.seconds(1.5);
  assert.deepEqual([d.toString(), d.inWholeUnits(), d.forPeople(), d.wholeSecondsUp, d.isWholeSeconds], ['1.5s', '1500ms', '1.5s', 2, false]);
  assert.deepEqual([Duration.seconds(120).toString(), Duration.seconds(120).inWholeUnits(), Duration.seconds(120).wholeSecondsUp], ['120s', '120s', 120]);
  assert.equal(Duration.seconds(0.1 + 0.2).toString(), '0.3s', 'rounded to the millisecond');
  assert.equal(roundSeconds(0.1 * 3), 0.3);
});

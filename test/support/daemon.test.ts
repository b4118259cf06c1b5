/**
 * A Proc's output: lines split where the process wrote its newlines, whatever pieces the pipe
 * delivered them in, and the last of a large write read once the process is `drained`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Proc } from './daemon';

test('lines are split at their newlines across writes, and a line of 30 MB written just before exit is read whole once drained', async () => {
  const script = [
    "process.stdout.write('first');",
    "process.stdout.write(' line\\nsecond\\n');",
    "process.stderr.write('on stderr\\n');",
    "process.stdout.write('{' + 'x'.repeat(30e6) + '}\\n');",
  ].join(' ');
  const proc = new Proc('writer', process.execPath, ['-e', script]);
  assert.deepEqual(await proc.exited, { code: 0, signal: null });
  await proc.drained;
  const stdout = proc.output.filter((l) => l.stream === 'stdout').map((l) => l.text);
  assert.deepEqual(stdout.slice(0, 2), ['first line', 'second']);
  assert.equal(stdout.length, 3);
  assert.equal(stdout[2]!.length, 30e6 + 2);
  assert.ok(stdout[2]!.startsWith('{x') && stdout[2]!.endsWith('x}'));
  assert.deepEqual(
    proc.output.filter((l) => l.stream === 'stderr').map((l) => l.text),
    ['on stderr'],
  );
});

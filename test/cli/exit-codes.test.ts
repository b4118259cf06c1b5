/**
 * One exit-code table for every command (issue 49): 0 done, 1 findings or refused, 2 bad input or
 * unreachable. Every command's --help ends with it, and the same unreachable sidecar is exit 2 for
 * `drain` and `state` alike (drain exited 1, state 2).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EXIT, EXIT_TABLE } from '../../src/cli/args';
import { freePort } from '../support/ports';
import { runCli } from '../support/run-cli';

/** The commands `gracegate help` lists. */
function commands(): string[] {
  const help = runCli(['help']).stdout;
  const block = /\ncommands:\n([\s\S]*?)\n\n/.exec(help)?.[1] ?? '';
  return block.split('\n').map((l) => l.trim().split(/\s+/)[0]!);
}

describe('the exit-code table', () => {
  test('the table says 0 done, 1 findings or refused, 2 bad input or unreachable', () => {
    assert.deepEqual(EXIT, { done: 0, refused: 1, badInput: 2 });
    assert.match(EXIT_TABLE, /^ {2}0 {2}done/m);
    assert.match(EXIT_TABLE, /^ {2}1 {2}findings at or above --fail-on, or refused/m);
    assert.match(EXIT_TABLE, /^ {2}2 {2}bad input or unreachable/m);
  });

  test("every command's --help ends with the table, and none has an exit status list of its own", () => {
    const names = commands();
    assert.ok(names.length >= 13 && names.includes('plan') && names.includes('drain'), names.join(' '));
    for (const name of [...names, '']) {
      const r = runCli(name === '' ? ['--help'] : ['help', name]);
      assert.equal(r.status, 0, name);
      assert.ok(r.stdout.endsWith(`\n${EXIT_TABLE}`), `gracegate help ${name} does not end with the table:\n${r.stdout.slice(-400)}`);
      assert.doesNotMatch(r.stdout, /^Exit status:/m, name);
    }
  });

  test('an unreachable sidecar: exit 2 for drain and for state, each naming the address', async () => {
    const port = String(await freePort());
    const drain = runCli(['drain', '--control-port', port, '--no-witness'], { timeoutMs: 30_000 });
    assert.equal(drain.status, EXIT.badInput, drain.stderr);
    assert.match(drain.stderr, new RegExp(`the sidecar at 127\\.0\\.0\\.1:${port} cannot be reached`));
    const state = runCli(['state', '--control-port', port]);
    assert.equal(state.status, EXIT.badInput, state.stderr);
    assert.match(state.stderr, new RegExp(`the sidecar at 127\\.0\\.0\\.1:${port} did not answer`));
  });

  test('bad input is 2 and a finding at --fail-on is 1, for plan and lint alike', () => {
    assert.equal(runCli(['plan', 'no-such-spec.yaml']).status, EXIT.badInput);
    assert.equal(runCli(['lint', 'no-such-file.yaml']).status, EXIT.badInput);
    assert.equal(runCli(['plan', 'examples/haproxy.yaml', '--fail-on', 'warning']).status, EXIT.refused);
    assert.equal(runCli(['plan', 'examples/haproxy.yaml']).status, EXIT.done);
  });
});

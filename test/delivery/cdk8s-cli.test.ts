import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { run, tempDir } from './tools';

/**
 * `npx cdk8s synth` as the README gives it: cdk8s-cli's upgrade check (on by default) asks the
 * registry for its latest version on every run; where that request fails it prints a stack trace
 * and "A new version undefined of cdk8s-cli is available" before synthesizing, which a CI log then
 * shows as an error that is not one. `--check-upgrade=false` (cdk8s-cli's own option) turns it off.
 */

const COMMAND = 'npx cdk8s synth --check-upgrade=false';

test('docs/delivery.md runs the bundled cdk8s app with the upgrade check off', () => {
  assert.ok(readFileSync(join(REPO_ROOT, 'docs', 'delivery.md'), 'utf8').includes(COMMAND), `docs/delivery.md does not say '${COMMAND}'`);
});

test('npx cdk8s synth --check-upgrade=false synthesizes and prints no error, stack trace or upgrade notice', () => {
  const out = tempDir('gracegate-cdk8s-cli-');
  const [cmd, ...args] = COMMAND.split(' ');
  const r = run(cmd!, [...args, '--output', out], { timeoutMs: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const printed = `${r.stdout}\n${r.stderr}`;
  for (const noise of [/new version/i, /Redirected request failed/, /^\s+at /m, /error/i, /npm install -g cdk8s-cli/]) {
    assert.doesNotMatch(printed, noise);
  }
  assert.ok(existsSync(join(out, 'gracegate-example.k8s.yaml')), printed);
});

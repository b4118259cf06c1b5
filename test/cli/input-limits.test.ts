/**
 * Input sizes (issue 18, attack 13): `plan /dev/zero`, `post-render < /dev/zero`, `--config
 * /dev/zero` and `--state-file /dev/zero` grew to gigabytes and aborted; a 45 MB spec took 3.5 GB.
 * Each input now has a limit (src/core/bounded-read.ts) and a larger one is refused with exit 2 (or, for
 * the sidecar's state file, a fresh start) before it is parsed. Regular files just over each limit
 * stand in for /dev/zero here, so a regression fails the test instead of eating the machine.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { HC_CONFIG_MAX_BYTES, MANIFESTS_MAX_BYTES, SPEC_MAX_BYTES, STATE_FILE_MAX_BYTES } from '../../src/core/bounded-read';
import { spawnHc, tempStateFile } from '../support/hc';
import { REPO_ROOT, runCli } from '../support/run-cli';
import { UNTRUSTED_LOG } from '../../src/hc/state-file';

const dir = path.dirname(tempStateFile());
const SPEC = fs.readFileSync(path.join(REPO_ROOT, 'examples/haproxy.yaml'), 'utf8');

/** A valid spec padded with a comment to `bytes`. */
function paddedSpec(bytes: number): string {
  const file = path.join(dir, `spec-${bytes}.yaml`);
  fs.writeFileSync(file, `${SPEC}# ${'x'.repeat(bytes - SPEC.length)}\n`);
  return file;
}

describe('input limits', () => {
  test('a spec over 1 MiB: plan, synth and lb-config exit 2 naming the file and the limit; just under is read', () => {
    const big = paddedSpec(SPEC_MAX_BYTES + 10);
    for (const args of [
      ['plan', big],
      ['synth', big, '--out', path.join(dir, 'out')],
      ['lb-config', big],
    ]) {
      const r = runCli(args);
      assert.equal(r.status, 2, `${args[0]}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /spec-1048586\.yaml is larger than 1 MiB, the most gracegate reads there/);
    }
    assert.equal(fs.existsSync(path.join(dir, 'out')), false);
    assert.equal(runCli(['plan', paddedSpec(SPEC_MAX_BYTES - 100)]).status, 0);
  });

  test('post-render: more than 16 MiB on stdin is exit 2, nothing on stdout', () => {
    const r = runCli(['post-render', '--spec', path.join(REPO_ROOT, 'examples/haproxy.yaml')], { input: `# ${'x'.repeat(MANIFESTS_MAX_BYTES)}\n` });
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /gracegate post-render: the rendered manifests on stdin is larger than 16 MiB/);
  });

  test('argocd: a rendered file over 16 MiB is exit 2', () => {
    const app = path.join(dir, 'app');
    fs.mkdirSync(app, { recursive: true });
    fs.writeFileSync(path.join(app, 'gracegate.yaml'), SPEC);
    fs.writeFileSync(path.join(app, 'rendered.yaml'), `# ${'x'.repeat(MANIFESTS_MAX_BYTES)}\n`);
    const r = runCli(['argocd', 'generate'], { cwd: app, env: { PARAM_RENDERED: 'rendered.yaml', ARGOCD_APP_NAMESPACE: 'istio-ingress' } });
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /rendered file rendered\.yaml is larger than 16 MiB/);
  });

  test('hc: a config over 64 KiB is exit 2; a state file over 64 KiB is not trusted (FAULT until Envoy is asked, docs/hc.md); a state file path that is not a regular file is exit 2', async () => {
    const config = path.join(dir, 'big-hc.json');
    fs.writeFileSync(config, `{"sequence": "drain-first", "stateFile": "${'x'.repeat(HC_CONFIG_MAX_BYTES)}"}`);
    const r = runCli(['hc', '--config', config, '--health-port', '0', '--control-port', '0', '--witness-port', '0'], { timeoutMs: 10_000 });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /big-hc\.json: the config is larger than 64 KiB/);

    // Replaced by a rename on every transition: a directory (or a device) must never be the state file.
    const notAFile = path.join(dir, 'a-directory');
    fs.mkdirSync(notAFile, { recursive: true });
    const d = runCli(['hc', '--state-file', notAFile, '--health-port', '0', '--control-port', '0', '--witness-port', '0'], { timeoutMs: 10_000 });
    assert.equal(d.status, 2, d.stderr);
    assert.match(d.stderr, /state file .*a-directory: exists and is not a regular file/);

    const stateFile = tempStateFile();
    fs.writeFileSync(stateFile, `{"version": 1, "pad": "${'x'.repeat(STATE_FILE_MAX_BYTES)}"}`);
    const hc = await spawnHc(['--state-file', stateFile, '--envoy-admin', 'http://127.0.0.1:9']);
    try {
      assert.ok(
        hc.logs.some((l) => l['msg'] === UNTRUSTED_LOG && /larger than 64 KiB/.test(String(l['error']))),
        JSON.stringify(hc.logs),
      );
    } finally {
      assert.equal(await hc.stop(), 0);
    }
  });
});

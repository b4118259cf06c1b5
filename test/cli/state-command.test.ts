import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PATHS, TERMINATION_EVENTS, type StateBody } from '../../src/contract/hc';
import { spawnHc, tempStateFile } from '../support/hc';
import { runCli } from '../support/run-cli';

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

test("gracegate state prints the sidecar's GET /state, the port from --control-port or from --config", async () => {
  const hc = await spawnHc(['--state-file', tempStateFile(), '--envoy-admin', 'http://127.0.0.1:9']);
  const dir = mkdtempSync(join(tmpdir(), 'gg-state-'));
  try {
    const port = new URL(hc.controlUrl).port;
    const byFlag = runCli(['state', '--control-port', port]);
    assert.equal(byFlag.status, 0, byFlag.stderr);
    const body = JSON.parse(byFlag.stdout) as StateBody;
    assert.equal(body.state, (await hc.state()).state);
    assert.deepEqual(
      body.events.map((e) => e.name),
      TERMINATION_EVENTS.map((e) => e.name),
    );

    const config = join(dir, 'hc.json');
    writeFileSync(config, JSON.stringify({ controlPort: Number(port) }));
    const byConfig = runCli(['state', '--config', config]);
    assert.equal(byConfig.status, 0, byConfig.stderr);
    assert.equal((JSON.parse(byConfig.stdout) as StateBody).sequence, body.sequence);
  } finally {
    await hc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('gracegate state: no sidecar on the port is exit 2, naming the address; --help lists the options', async () => {
  const port = await closedPort();
  const r = runCli(['state', '--control-port', String(port)]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, new RegExp(`the sidecar at 127\\.0\\.0\\.1:${port} did not answer GET ${PATHS.state}: .*ECONNREFUSED`));
  assert.equal(r.stdout, '');
  const help = runCli(['state', '--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /--config FILE/);
  assert.match(help.stdout, /--control-port N/);
  assert.match(runCli(['--help']).stdout, /^\s+state\s+/m);
});

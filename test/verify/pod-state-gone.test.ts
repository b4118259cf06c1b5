/**
 * verify --pod-state stops asking a pod the API server no longer has: on the test cluster a
 * deleted pod whose last answer said its sequence was running was asked every 250 ms until the run
 * ended (79 of 88 calls), calls that took their turn from the pods still draining.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { PodStatePoller } from '../../src/verify/pod-state-kubectl';

test('a pod kubectl reports NotFound is asked once; one failing otherwise keeps being asked', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gracegate-gone-'));
  try {
    const bin = join(dir, 'kubectl');
    // `exec -n NS POD …`: the gone pod is NotFound, the other fails as a timeout would.
    writeFileSync(
      bin,
      '#!/bin/sh\nif [ "$4" = gone ]; then echo \'Error from server (NotFound): pods "gone" not found\' >&2; else echo "error: unable to upgrade connection" >&2; fi\nexit 1\n',
    );
    chmodSync(bin, 0o755);
    const poller = new PodStatePoller({ kubectl: bin, namespace: 'ns', selector: 'app=x' }, ['gone', 'flaky']);
    poller.start();
    await new Promise((r) => setTimeout(r, 2500));
    await poller.stop();
    const p = poller.polling();
    // 'gone': one call; 'flaky': one a second (no answer yet: the idle interval), so at least two in 2.5 s.
    assert.ok(p.polls >= 3 && p.polls <= 5, `calls made: ${p.polls}`);
    assert.equal(p.failures, p.polls);
    assert.match(p.lastError ?? '', /^flaky: /, 'the last call went to the pod that may still answer');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

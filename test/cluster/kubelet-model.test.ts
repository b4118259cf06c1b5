/**
 * The harness's kubelet (test/e2e/harness/kubelet.ts) held to the real one (kubelet-model.ts runs
 * the same pod on both). The tolerances were fixed before the first cluster run: hooks start
 * together (within 100 ms), each container's SIGTERM comes with its own hook's end (within 100 ms of
 * the model), SIGKILL and the native sidecar's turn within 250 ms of the model.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { kubectl } from './kubectl';
import { compareKubelet, KUBELET_MODEL_NS } from './kubelet-model';
import { requireCluster } from './require-cluster';

const NS = KUBELET_MODEL_NS;

before(() => {
  requireCluster();
  kubectl(['create', 'namespace', NS], { allowFailure: true });
});
after(() => {
  kubectl(['delete', 'namespace', NS, '--wait=false'], { allowFailure: true });
});

for (const native of [false, true]) {
  test(`the harness's kubelet agrees with the real one${native ? ' (native sidecar)' : ''}: hooks together, SIGTERM at each hook's end, SIGKILL at the grace period`, {
    timeout: 120_000,
  }, async () => {
    const { real, model } = await compareKubelet(native);
    const report = JSON.stringify({ real, model });
    assert.ok(Math.abs(real.short.hookStart! - real.long.hookStart!) <= 100, `the real kubelet starts both hooks together: ${report}`);
    for (const c of ['long', 'short'] as const) {
      assert.ok(
        Math.abs(real[c].sigterm! - model[c].sigterm!) <= (native && c === 'short' ? 250 : 100),
        `${c}: SIGTERM real ${real[c].sigterm} vs model ${model[c].sigterm} ms: ${report}`,
      );
      assert.ok(real[c].sigkill !== null && model[c].sigkill !== null, `${c}: both SIGKILL a container that ignores SIGTERM: ${report}`);
      assert.ok(Math.abs(real[c].sigkill! - model[c].sigkill!) <= 250, `${c}: SIGKILL real ${real[c].sigkill} vs model ${model[c].sigkill} ms: ${report}`);
    }
    if (native) assert.ok(real.short.sigterm! >= real.long.exit!, `the native sidecar gets SIGTERM only after the main container exited: ${report}`);
  });
}

/**
 * The harness's kubelet (test/e2e/harness/kubelet.ts) held to the real one (kubelet-model.ts runs
 * the same pod on both). The tolerances were fixed before the first cluster run: hooks start
 * together (within 100 ms), each container's SIGTERM comes with its own hook's end (within 100 ms of
 * the model), SIGKILL and the native sidecar's turn within 250 ms of the model (the turn counted from
 * the main container's stop as the kubelet saw it, the sidecar's SIGKILL from its turn).
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
      assert.ok(real[c].sigkill !== null && model[c].sigkill !== null, `${c}: both SIGKILL a container that ignores SIGTERM: ${report}`);
      if (native && c === 'short') {
        // The native sidecar's turn comes when the kubelet sees the main container stopped (its
        // runtime call returned: after a SIGKILL, 300 ms later on a loaded node, at once in the
        // model), and its own grace (2 s at least) counts from that turn: both compared counted
        // from there.
        const realTurn = real.short.sigterm! - real.long.stopped!;
        const modelTurn = model.short.sigterm! - model.long.stopped!;
        assert.ok(Math.abs(realTurn - modelTurn) <= 250, `short: SIGTERM ${realTurn} ms after the main container stopped, model ${modelTurn} ms: ${report}`);
        const realKill = real.short.sigkill! - real.short.sigterm!;
        const modelKill = model.short.sigkill! - model.short.sigterm!;
        assert.ok(Math.abs(realKill - modelKill) <= 250, `short: SIGKILL ${realKill} ms after its SIGTERM, model ${modelKill} ms: ${report}`);
        continue;
      }
      assert.ok(Math.abs(real[c].sigterm! - model[c].sigterm!) <= 100, `${c}: SIGTERM real ${real[c].sigterm} vs model ${model[c].sigterm} ms: ${report}`);
      assert.ok(Math.abs(real[c].sigkill! - model[c].sigkill!) <= 250, `${c}: SIGKILL real ${real[c].sigkill} vs model ${model[c].sigkill} ms: ${report}`);
    }
    if (native)
      assert.ok(real.short.sigterm! >= real.long.stopped!, `the native sidecar gets SIGTERM only after the kubelet saw the main container stop: ${report}`);
  });
}

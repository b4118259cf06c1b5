import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';
import { REPO_ROOT } from '../emit/helpers';

it('src/pod, the values overlays, the containerd emitter, the workload paths and the delivery registry load neither cdk8s, cdk8s-plus-28 nor constructs (post-render and plan stay light)', () => {
  const modules = [
    'src/pod/index.js',
    'src/delivery/helm-values/overlay.js',
    'src/emit/containerd/index.js',
    'src/emit/plan-markdown.js',
    'src/schema/spec-kinds.js',
    'src/plan/workload/plan-workload.js',
    'src/pod/workload/pod-changes.js',
    'src/pod/workload/apply.js',
    'src/delivery/post-render/workload.js',
    'src/delivery/kustomize/workload-component.js',
    'src/delivery/registry.js',
    'src/emit/workload/plan-markdown.js',
    'src/emit/workload/plan-text.js',
  ].map((m) => join(REPO_ROOT, 'dist', m));
  const script = `${modules.map((m) => `require(${JSON.stringify(m)});`).join('')}
    process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((k) => /node_modules[\\\\/](cdk8s|cdk8s-plus-28|constructs)[\\\\/]/.test(k))));`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), []);
});

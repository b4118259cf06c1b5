import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI } from '../emit/helpers';
import { requireTool, TOOLS } from '../delivery/tools';
import { testDir } from '../support/tmp';

/* `gracegate lint --cluster` where it cannot read a cluster: bad input, named, nothing on stdout (the cluster itself: test/proof/cluster/delivery-paths.test.ts). */

const lint = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, [CLI, 'lint', ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } });

test('no kubectl where GRACEGATE_KUBECTL points: exit 2, the variable named', () => {
  const r = lint(['--cluster'], { GRACEGATE_KUBECTL: '/nonexistent/kubectl' });
  assert.equal(r.status, 2);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /GRACEGATE_KUBECTL=\/nonexistent\/kubectl: not an executable file/);
});

test("a kubeconfig that does not exist, or a context it lacks: exit 2 with kubectl's words", () => {
  const kubectl = requireTool(TOOLS.kubectl);
  const missing = lint(['--kubeconfig', '/nonexistent/kubeconfig'], { GRACEGATE_KUBECTL: kubectl });
  assert.equal(missing.status, 2);
  assert.equal(missing.stdout, '');
  assert.match(missing.stderr, /kubectl --kubeconfig \/nonexistent\/kubeconfig get deployments\.apps --all-namespaces failed: .*\/nonexistent\/kubeconfig/);
  const dir = testDir('gracegate-kubeconfig-');
  const file = join(dir, 'kubeconfig');
  writeFileSync(
    file,
    'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: here, context: {cluster: c, user: u}}]\ncurrent-context: here\n',
  );
  const context = lint(['--kubeconfig', file, '--context', 'elsewhere'], { GRACEGATE_KUBECTL: kubectl });
  assert.equal(context.status, 2);
  assert.match(context.stderr, /--context elsewhere get deployments\.apps --all-namespaces failed: .*context.*elsewhere/i);
});

test('--cluster with manifests, or neither: usage errors', () => {
  const both = lint(['--cluster', 'x.yaml']);
  assert.equal(both.status, 2);
  assert.match(both.stderr, /give manifests or --cluster, not both/);
  const neither = lint([]);
  assert.equal(neither.status, 2);
  assert.match(neither.stderr, /or --cluster/);
});

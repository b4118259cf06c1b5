/**
 * docs/cluster.md's generated blocks and the README's real-cluster rows are what
 * docs/cluster/results.json renders to (npm run cluster:report measures and writes all three; `node
 * dist/test/proof/cluster/report-main.js --render` renders the committed file again). Runs without a
 * cluster: it reads files only.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../support/repo';
import { renderClusterMd, renderReadmeWithCluster, type ClusterResults } from './cluster/render';
import { SESSIONS } from './cluster/sessions';

const results = JSON.parse(readFileSync(join(REPO_ROOT, 'docs/cluster/results.json'), 'utf8')) as ClusterResults;
const HINT = 'regenerate with `npm run build && node dist/test/proof/cluster/report-main.js --render` (or measure anew: npm run cluster:report)';

test('docs/cluster.md is what docs/cluster/results.json renders to', () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs/cluster.md'), 'utf8');
  assert.equal(renderClusterMd(doc, results), doc, HINT);
});

test("the README's real-cluster rows are what docs/cluster/results.json renders to", () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  assert.equal(renderReadmeWithCluster(readme, results), readme, HINT);
});

test('the results cover every session and action the tests run; the contrast lost requests, the gracegate runs none the plan leaves unexplained', () => {
  for (const s of SESSIONS) {
    for (const action of new Set(s.actions)) {
      const run = results.runs.find((r) => r.session === s.key && r.action === action);
      assert.ok(run, `docs/cluster/results.json has ${s.key} ${action}`);
      if (s.order === 'article') assert.ok(run.failureTotal > 0, 'the contrast lost requests when it was measured');
    }
  }
  assert.equal(results.kubeletModel.length, 2);
  assert.ok(results.longDrain.length >= 2);
});

test('the results hold the GitOps rollout Argo CD synced (test/proof/cluster/argocd.test.ts): every pod replaced, 0 lost, nothing SIGKILLed', () => {
  const runs = results.argocd?.runs ?? [];
  assert.equal(runs.length, 1, 'docs/cluster/results.json has the Argo CD rollout');
  const r = runs[0]!;
  assert.equal(r.action, 'sync');
  assert.equal(r.failureTotal, 0);
  assert.ok(r.pods.length >= 2, `every pod replaced (${r.pods.length})`);
  for (const p of r.pods) assert.equal(p.sigkills, 0, `${p.pod}: not SIGKILLed`);
});

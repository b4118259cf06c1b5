import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../support/run-cli';
import { run, tempDir } from './tools';

const tmp = tempDir('gracegate-library-app-');

test('the library example synthesizes like a user app, through the package entry', () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
  // What the example imports by path is what `import ... from 'gracegate'` loads.
  const entry = require(join(REPO_ROOT, pkg.main));
  assert.equal(typeof entry.GracefulGateway, 'function');
  assert.equal(typeof entry.planGateway, 'function');

  const r = run(process.execPath, [join(REPO_ROOT, 'dist/examples/library-app/main.js'), join(REPO_ROOT, 'examples/haproxy.yaml')], {
    env: { CDK8S_OUTDIR: tmp },
  });
  assert.equal(r.status, 0, r.stderr);
  const files = readdirSync(tmp);
  assert.deepEqual(files, ['edge.k8s.yaml']);
  const objects = parseAllDocuments(readFileSync(join(tmp, files[0]!), 'utf8')).map((d) => d.toJS());
  const dep = objects.find((o) => o.kind === 'Deployment');
  const hc = dep.spec.template.spec.containers.find((c: { name: string }) => c.name === 'gracegate-hc');
  assert.equal(hc.image, 'registry.example.com/gracegate:0.1.0');
  assert.equal(dep.spec.template.spec.terminationGracePeriodSeconds, 190);
  assert.ok(objects.some((o) => o.kind === 'PodDisruptionBudget'));
});

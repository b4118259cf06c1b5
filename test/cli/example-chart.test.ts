import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { EXAMPLE_CHART_NAME } from '../../examples/cdk8s-app/main';
import { synthExampleChart } from '../../examples/cdk8s-app/synth-helm-chart';
import { HELMS, REPO_ROOT, helm, validateK8s, yamlDocs } from '../emit/helpers';

const COMMITTED = join(REPO_ROOT, 'charts', EXAMPLE_CHART_NAME);
const work = mkdtempSync(join(tmpdir(), 'gracegate-example-chart-'));
after(() => rmSync(work, { recursive: true, force: true }));

function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else out[relative(dir, full)] = readFileSync(full, 'utf8');
    }
  };
  walk(dir);
  return out;
}

describe(`charts/${EXAMPLE_CHART_NAME} (cdk8s synth --format helm of examples/cdk8s-app)`, () => {
  it('is not stale: regenerating it gives the committed files', () => {
    const fresh = join(work, 'chart');
    synthExampleChart(fresh);
    assert.deepEqual(files(fresh), files(COMMITTED), `stale: run 'npm run build && node dist/examples/cdk8s-app/synth-helm-chart.js'`);
  });

  for (const [label, binary] of Object.entries(HELMS)) {
    it(`passes helm lint and renders valid objects (${label})`, () => {
      helm(binary, ['lint', COMMITTED]);
      const docs = yamlDocs(helm(binary, ['template', 'example', COMMITTED]));
      assert.ok(docs.some((d) => d.kind === 'Deployment'));
      docs.forEach(validateK8s);
    });
  }
});

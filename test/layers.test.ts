import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { REPO_ROOT } from './support/repo';

const SRC = join(REPO_ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const full = join(dir, f);
    return statSync(full).isDirectory() ? sources(full) : f.endsWith('.ts') ? [full] : [];
  });
}

/** The src/ folders a file imports from (relative imports and requires only). */
function importedFolders(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from\s+|require\(\s*|import\(\s*)'(\.{1,2}\/[^']*)'/g)].map((m) => m[1]!);
  return specs.map((s) => relative(SRC, resolve(dirname(file), s)).split('/')[0]!);
}

test('no module below the CLI imports from src/cli/ (the layers run one way)', () => {
  const offenders = sources(SRC)
    .filter((f) => !relative(SRC, f).startsWith('cli/'))
    .filter((f) => importedFolders(f).includes('cli'))
    .map((f) => relative(REPO_ROOT, f));
  assert.deepEqual(offenders, []);
});

test('the hc sidecar loads neither the planner, the LB vendors, the pod changes nor any emitter', () => {
  const heavy = ['plan', 'lb', 'pod', 'emit', 'constructs', 'inject', 'cli'];
  const offenders = sources(join(SRC, 'hc')).filter((f) => importedFolders(f).some((d) => heavy.includes(d))).map((f) => relative(REPO_ROOT, f));
  assert.deepEqual(offenders, []);
});

test('inject/ holds the post-renderers only (a gateway\'s and a workload\'s)', () => {
  const files = readdirSync(join(SRC, 'inject')).sort();
  assert.deepEqual(files, ['manifest-stream.ts', 'post-render.ts', 'target.ts', 'workload-post-render.ts', 'yaml-sync.ts']);
});

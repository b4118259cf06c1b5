/**
 * Dependencies are chosen, not collected: what src/ imports is what package.json ships to users,
 * and a package that serves one purpose stays in the module that purpose lives in.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './support/repo';

const SRC = join(REPO_ROOT, 'src');
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};

type Source = { path: string; text: string };

function sources(dir = SRC): Source[] {
  return readdirSync(dir).flatMap((f) => {
    const full = join(dir, f);
    if (statSync(full).isDirectory()) return sources(full);
    return f.endsWith('.ts') ? [{ path: relative(SRC, full).split(sep).join('/'), text: readFileSync(full, 'utf8') }] : [];
  });
}

/** The packages a module names (imports, exports, import(), require()), node's own modules aside. */
function packagesOf(text: string): string[] {
  const names = ts
    .preProcessFile(text, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((s) => !s.startsWith('.') && !s.startsWith('node:') && !builtinModules.includes(s));
  return [...new Set(names.map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!)))];
}

/** Every mention of `name` in the module is an `import type` (types only: nothing of it runs). */
function typesOnly(text: string, name: string): boolean {
  const quoted = (s: string) => s.split(`'${name}'`).length - 1;
  const typeImports = [...text.matchAll(/^import type [^;]*;$/gm)].map((m) => m[0]).join('\n');
  return quoted(text) === quoted(typeImports);
}

test('src/ runs only what package.json ships: its dependencies and peers (a development package for types alone)', () => {
  const shipped = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)]);
  const unshipped = sources().flatMap((s) =>
    packagesOf(s.text)
      .filter((p) => !shipped.has(p) && !typesOnly(s.text, p))
      .map((p) => `${s.path}: ${p}`),
  );
  assert.deepEqual(unshipped, []);
});

test("js-yaml is lint's streaming reader's alone: every other YAML a user wrote goes through core/yaml-input.ts", () => {
  const importers = sources()
    .filter((s) => packagesOf(s.text).includes('js-yaml'))
    .map((s) => s.path);
  assert.deepEqual(importers, ['lint/manifests.ts']);
});

test('a package src/ no longer imports is not shipped to users', () => {
  const used = new Set(sources().flatMap((s) => packagesOf(s.text)));
  assert.deepEqual(
    Object.keys(pkg.dependencies).filter((p) => !used.has(p)),
    [],
  );
});

/**
 * The delivery wing's parts, as test/lb/vendors.test.ts holds the vendor wing's: every folder of
 * src/delivery/ is a path of the registry with its description, its docs and its plugin files, and
 * nothing outside src/delivery/ reaches into a path's folder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { DELIVERY_PATH_NAMES } from '../../src/delivery/path';
import { DELIVERY_PATHS } from '../../src/delivery/registry';
import { REPO_ROOT } from '../support/repo';

const SRC = join(REPO_ROOT, 'src');
const WING = join(SRC, 'delivery');
const PLUGINS = join(REPO_ROOT, 'plugins');

const dirs = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => statSync(join(dir, f)).isDirectory())
    .sort();

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const full = join(dir, f);
    return statSync(full).isDirectory() ? sources(full) : f.endsWith('.ts') ? [full] : [];
  });
}

/** A heading's anchor as GitHub makes it: lower case, punctuation gone, spaces to hyphens. */
const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

test('every folder of src/delivery/ is a path of the registry, and every path is a folder', () => {
  assert.deepEqual(dirs(WING), Object.keys(DELIVERY_PATHS).sort());
  assert.deepEqual([...DELIVERY_PATH_NAMES].sort(), Object.keys(DELIVERY_PATHS).sort());
});

test('each path describes itself in its index.ts: its name, how the pod changes get in, its docs section', () => {
  for (const [name, path] of Object.entries(DELIVERY_PATHS)) {
    assert.ok(existsSync(join(WING, name, 'index.ts')), `src/delivery/${name}/index.ts`);
    assert.equal(path.name, name);
    assert.ok(path.how.length > 20, `${name}: how`);
    const [page, anchor] = path.docs.split('#') as [string, string];
    const headings = [...readFileSync(join(REPO_ROOT, page), 'utf8').matchAll(/^#{1,4} (.+)$/gm)].map((m) => anchorOf(m[1]!));
    assert.ok(headings.includes(anchor), `${name}: ${path.docs} is a section of ${page}`);
  }
});

test('plugins/ holds the files a user installs for exactly the paths that name them, one folder each', () => {
  const named = Object.values(DELIVERY_PATHS)
    .filter((p) => p.plugin !== null)
    .map((p) => {
      assert.equal(p.plugin, `plugins/${p.name}`);
      return p.name;
    });
  assert.deepEqual(dirs(PLUGINS), named.sort());
});

test("docs/delivery.md's table of paths is the registry's: each path, how the pod changes get in, its folder", () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs/delivery.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| `([a-z0-9-]+)` \| (.+) \| `src\/delivery\/([a-z0-9-]+)\/` \|$/gm)].map((m) => [m[1], m[2], m[3]]);
  assert.deepEqual(
    rows,
    Object.values(DELIVERY_PATHS).map((p) => [p.name, p.how, p.name]),
  );
});

test('no file outside src/delivery/ imports a path folder: the commands go through the registry, the library through library.ts', () => {
  const pathDirs = new Set<string>(Object.keys(DELIVERY_PATHS).map((n) => join(WING, n)));
  const inPath = (file: string) => [...pathDirs].some((d) => file === d || file.startsWith(`${d}${sep}`));
  const offenders = sources(SRC)
    .filter((f) => !f.startsWith(`${WING}${sep}`))
    .flatMap((f) =>
      ts
        .preProcessFile(readFileSync(f, 'utf8'), true, true)
        .importedFiles.map((i) => i.fileName)
        .filter((spec) => spec.startsWith('.') && inPath(resolve(dirname(f), spec)))
        .map((spec) => `${relative(REPO_ROOT, f)}: ${spec}`),
    );
  assert.deepEqual(offenders, []);
});

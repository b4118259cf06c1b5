import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './support/repo';

/** The documented surface: the "values" and "types" columns of the table in docs/delivery.md. */
function documented(): { values: string[]; types: string[] } {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'delivery.md'), 'utf8');
  const table = doc.slice(doc.indexOf('| for | values | types |')).split('\n\n')[0]!.split('\n').slice(2);
  const names = (cell: string) => [...cell.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)`/g)].map((m) => m[1]!);
  const rows = table.map((line) => line.split('|').map((c) => c.trim()));
  return { values: rows.flatMap((r) => names(r[2]!)).sort(), types: rows.flatMap((r) => names(r[3]!)).sort() };
}

test('the package entry exports the documented library surface, and only that', () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
  const entry = require(join(REPO_ROOT, pkg.main)) as Record<string, unknown>;
  const { values, types } = documented();
  assert.ok(values.length > 10, 'the table was found');
  assert.deepEqual(
    Object.keys(entry)
      .filter((k) => k !== '__esModule')
      .sort(),
    values,
  );
  // The declaration file's export lists: every name, values and types alike.
  const declarations = readFileSync(join(REPO_ROOT, pkg.types), 'utf8');
  const exported = [...declarations.matchAll(/export (?:type )?\{([^}]*)\}/g)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((n) => n.replace(/^\s*type\s+/, '').trim())
      .filter((n) => n !== ''),
  );
  assert.deepEqual(exported.sort(), [...values, ...types].sort());
});

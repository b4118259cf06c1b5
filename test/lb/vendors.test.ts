import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { LB_CONFIGS } from '../../src/lb-config';
import { LB_VENDORS } from '../../src/lb/registry';
import { REPO_ROOT } from '../support/repo';

const LB_DIR = join(REPO_ROOT, 'src', 'lb');
/** The parts every vendor folder provides (the registry entry points at them). */
const PARTS = ['schema.ts', 'behaviour.ts', 'texts.ts', 'findings.ts', 'index.ts'];
/** Where each vendor's LB-side config is rendered from a finished plan (src/lb-config/<model>.ts). */
const LB_CONFIG_DIR = join(REPO_ROOT, 'src', 'lb-config');

function vendorFolders(): string[] {
  return readdirSync(LB_DIR)
    .filter((f) => statSync(join(LB_DIR, f)).isDirectory())
    .sort();
}

test('every vendor folder is in the registry, and every registry entry is a folder', () => {
  assert.deepEqual(vendorFolders(), Object.keys(LB_VENDORS).sort());
});

test('each vendor folder provides every part: schema, behaviour, LB-side config, remediation texts, finding rules', () => {
  for (const model of vendorFolders()) {
    for (const part of PARTS) assert.ok(existsSync(join(LB_DIR, model, part)), `src/lb/${model}/${part}`);
    assert.ok(existsSync(join(LB_CONFIG_DIR, `${model}.ts`)), `src/lb-config/${model}.ts`);
    const vendor = LB_VENDORS[model as keyof typeof LB_VENDORS];
    const schema = z.toJSONSchema(vendor.schema, { io: 'input', unrepresentable: 'any' }) as unknown as {
      properties: { model: { const: string } };
      additionalProperties: boolean;
    };
    assert.equal(schema.properties.model.const, model, `src/lb/${model}: the schema's model is its key`);
    assert.equal(schema.additionalProperties, false, `src/lb/${model}: the block is strict`);
    assert.equal(typeof vendor.behaviour, 'function', `src/lb/${model}: behaviour`);
    assert.equal(typeof LB_CONFIGS[model as keyof typeof LB_CONFIGS].lbConfig, 'function', `src/lb-config/${model}.ts: lbConfig`);
    for (const [name, text] of Object.entries(vendor.texts)) assert.ok(text.length > 0, `src/lb/${model}: texts.${name}`);
    assert.ok(Array.isArray(vendor.findings), `src/lb/${model}: findings`);
  }
});

test("a vendor's finding rules have kebab-case ids no other rule uses", () => {
  const ids = Object.values(LB_VENDORS).flatMap((v) => v.findings.map((r) => r.id));
  for (const id of ids) assert.match(id, /^[a-z0-9]+(-[a-z0-9]+)*$/);
  assert.equal(new Set(ids).size, ids.length);
});

test('no vendor branch outside src/lb/: only the vendor folders and their lb-config renderers name a model', () => {
  // One model, one place (issue 48): everything else reads the LB behaviour (src/model/lb-behaviour.ts)
  // or dispatches through the registries.
  const SRC = join(REPO_ROOT, 'src');
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : f.endsWith('.ts') ? [join(dir, f)] : []));
  const models = Object.keys(LB_VENDORS).join('|');
  const branch = new RegExp(`\\.model\\s*[!=]==?\\s*'(${models})'|case '(${models})':`);
  const offenders = files(SRC)
    .filter((f) => !f.startsWith(join(SRC, 'lb') + '/') && !(f.startsWith(join(SRC, 'lb-config') + '/') && !f.endsWith('index.ts')))
    .filter((f) => branch.test(readFileSync(f, 'utf8')))
    .map((f) => f.slice(SRC.length + 1));
  assert.deepEqual(offenders, []);
});

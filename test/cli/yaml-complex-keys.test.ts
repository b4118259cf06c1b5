/**
 * A YAML key that is itself a list or a map (`? [a, b]`, issue 37): the yaml library turned it into
 * the string "[ a, b ]" and Node printed its own warning ("Keys with collection values will be
 * stringified…") to the user. Wherever gracegate parses YAML a user wrote (src/core/yaml-input.ts,
 * the one place): a spec, post-render's stdin, a Gateway's parameters ConfigMap and the patches in
 * it. Now: gracegate's error naming the line, exit 2, no warning, nothing on stdout.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { REPO_ROOT, runCli } from '../support/run-cli';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gracegate-complex-keys-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const SPEC_PATH = path.join(REPO_ROOT, 'examples/haproxy.yaml');
const SPEC = fs.readFileSync(SPEC_PATH, 'utf8');
const WORDS = 'a key that is a list or a map (`? [a, b]`, `? {a: 1}`): gracegate reads keys as text only; write the key as a plain string';

function lineOf(text: string, needle: string): number {
  return text.split('\n').findIndex((l) => l.includes(needle)) + 1;
}

function assertRefused(r: ReturnType<typeof runCli>, expected: string): void {
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.doesNotMatch(r.stderr, /Warning|stringified/, "no Node warning, gracegate's words only");
  assert.equal(r.stderr, `${expected}\n`);
}

test('a spec with a key that is a list, or a map: exit 2 naming the file and line', () => {
  for (const key of ['? [a, b]\n: 1', '? {a: 1}\n: 1']) {
    const text = SPEC.replace(/^spec:\n/m, `spec:\n  ${key.replace('\n', '\n  ')}\n`);
    const file = path.join(dir, 'complex.yaml');
    fs.writeFileSync(file, text);
    assertRefused(runCli(['plan', file]), `${file}:${lineOf(text, '? ')}: (document): YAML: ${WORDS}`);
  }
});

test('post-render stdin with such a key: exit 2 naming the document and line', () => {
  const input = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  ? [a, b]\n  : c\n';
  assertRefused(runCli(['post-render', '--spec', SPEC_PATH], { input }), `gracegate post-render: stdin: document 2 (line 11): ${WORDS}`);
});

test("a Gateway's parameters ConfigMap with such a key, and a patch in it with one: exit 2 naming the line", () => {
  const spec = path.join(REPO_ROOT, 'examples/gateway-api.yaml');
  const top = path.join(dir, 'params.yaml');
  fs.writeFileSync(top, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\n? [x]\n: y\n');
  assertRefused(runCli(['synth', spec, '--out', path.join(dir, 'out1'), '--parameters', top]), `${top}:5: YAML: ${WORDS}`);
  const inner = path.join(dir, 'params-inner.yaml');
  fs.writeFileSync(inner, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\ndata:\n  deployment: |\n    spec:\n      ? [x]\n      : y\n');
  const r = runCli(['synth', spec, '--out', path.join(dir, 'out2'), '--parameters', inner]);
  assertRefused(r, `${inner}: data.deployment: YAML (line 2 of the value): ${WORDS}`);
  assert.equal(fs.existsSync(path.join(dir, 'out2')), false, 'nothing written');
});

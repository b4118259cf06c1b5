/**
 * YAML aliases as an attack (issue 18, attack 8): a billion-laughs document, or an alias whose
 * anchor is in another document, in a spec or on post-render's stdin, exited 1 with the yaml
 * library's stack trace. Now: exit 2, one line naming the input and document, nothing on stdout.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { tempStateFile } from '../support/hc';
import { REPO_ROOT, runCli } from '../support/run-cli';

const dir = path.dirname(tempStateFile());
const SPEC_PATH = path.join(REPO_ROOT, 'examples/haproxy.yaml');
const SPEC = fs.readFileSync(SPEC_PATH, 'utf8');
const BOMB = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...'bcdef'.split('').map((k, i) => {
    const prev = 'abcde'[i]!;
    return `${k}: &${k} [${Array(9).fill(`*${prev}`).join(',')}]`;
  }),
].join('\n');
const CROSS_DOCUMENT = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: &n x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: *n}\n';

function noTrace(stderr: string): void {
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
}

test('a spec that is an alias bomb, or holds an alias without its anchor: exit 2 naming the file', () => {
  for (const [name, text, message] of [
    ['bomb.yaml', `${SPEC}${BOMB}\n`, /bomb\.yaml:1: \(document\): YAML: Excessive alias count/],
    ['unresolved.yaml', `${SPEC}x: *nowhere\n`, /unresolved\.yaml:1: \(document\): YAML: Unresolved alias .*nowhere/],
  ] as const) {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    const r = runCli(['plan', file]);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, message);
    noTrace(r.stderr);
  }
});

test('post-render stdin with an alias bomb or a cross-document alias: exit 2 naming the document', () => {
  for (const [input, message] of [
    [`${BOMB}\n`, /gracegate post-render: stdin: document 1 \(line 1\): Excessive alias count/],
    [CROSS_DOCUMENT, /gracegate post-render: stdin: document 2 \(line 4\): Unresolved alias .*: n/],
  ] as const) {
    const r = runCli(['post-render', '--spec', SPEC_PATH], { input });
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, message);
    noTrace(r.stderr);
  }
});

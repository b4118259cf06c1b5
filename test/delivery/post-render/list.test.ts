/**
 * `post-render` on a `kind: List`, what `kubectl get -o yaml` prints (issue 37): each item changed as
 * the same object is in a plain stream, the List kept, the objects gracegate adds appended after it;
 * kubectl apply applies a List's items one by one. Before, the List was refused ("not a Kubernetes
 * object (no metadata.name)") while lint read its items.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { REPO_ROOT, runCli } from '../../support/run-cli';

const SPEC = 'examples/haproxy.yaml';
const RENDERED = readFileSync(join(REPO_ROOT, 'test/delivery/post-render/fixtures/rendered-1.26-like.yaml'), 'utf8');

type Obj = Record<string, any>;

function objects(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

/** The rendered objects as one List, the way kubectl prints several objects. */
const items = objects(RENDERED);
const LIST = `# kubectl get deploy,svc,sa,role,rolebinding -n istio-ingress -o yaml\n${stringify({ apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } })}`;

function postRender(input: string) {
  const r = runCli(['post-render', '--spec', SPEC], { input });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

test('a List: each item changed as in a plain stream, the List kept, gracegate’s objects after it', () => {
  const plain = objects(postRender(RENDERED));
  const out = postRender(LIST);
  const [list, ...appended] = objects(out);
  assert.equal(list!.kind, 'List');
  assert.deepEqual(list!.metadata, { resourceVersion: '' });
  assert.ok(out.startsWith('# kubectl get'), 'the comment above the List kept');
  assert.equal(list!.items.length, items.length, 'the same items, none added to the List');
  // Every item is what post-render makes of the same object in a plain stream; the rest of the plain output is appended.
  assert.deepEqual(list!.items, plain.slice(0, items.length));
  assert.deepEqual(appended, plain.slice(items.length));
  const deployment = (list!.items as Obj[]).find((o) => o.kind === 'Deployment')!;
  assert.deepEqual(
    deployment.spec.template.spec.containers.map((c: Obj) => c.name),
    ['istio-proxy', 'gracegate-hc'],
    'the sidecar is in the List’s Deployment',
  );
  assert.equal(postRender(out), out, 'a second pass changes nothing');
});

test('an item of a List that is not a Kubernetes object: exit 2 naming the document, the item and its line', () => {
  const bad = stringify({ apiVersion: 'v1', kind: 'List', items: [items[0], { apiVersion: 'v1', kind: 'ConfigMap' }] });
  const lines = bad.split('\n');
  const before = lines.slice(
    0,
    lines.findIndex((l) => l.includes('kind: ConfigMap')),
  );
  const itemLine = before.length - [...before].reverse().findIndex((l) => /^\s*- /.test(l));
  const r = runCli(['post-render', '--spec', SPEC], { input: bad });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, `gracegate post-render: stdin: document 1, the List's item 2 (line ${itemLine}) is not a Kubernetes object (no metadata.name)\n`);
});

/**
 * The namespace checks see what kubectl sees (issue 46, item 5): a `<<` merge key is resolved as Go
 * YAML resolves it (kubectl and Argo CD read manifests with it), so a namespace hidden in one is the
 * namespace checked; a document holding one is never rewritten; and post-render touches Services
 * only in the gateway's namespace. Also the YAML work of a rendered stream: duplicate keys found in
 * one pass, with their line.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { yamlWork } from '../../../src/core/yaml-input';
import { REPO_ROOT, runCli } from '../../support/run-cli';

const SPEC = 'examples/haproxy.yaml';
const RENDERED = readFileSync(join(REPO_ROOT, 'test/delivery/post-render/fixtures/rendered-1.26-like.yaml'), 'utf8');
const postRender = (input: string) => runCli(['post-render', '--spec', SPEC], { input });

/** The gateway Deployment's `namespace: istio-ingress` line, replaced by `line`. */
function deploymentNamespace(line: string): string {
  const at = RENDERED.indexOf('kind: Deployment\nmetadata:\n  name: igw-public\n  namespace: istio-ingress\n');
  assert.ok(at >= 0, 'the fixture has the gateway Deployment');
  const from = RENDERED.indexOf('  namespace: istio-ingress\n', at);
  return `${RENDERED.slice(0, from)}${line}\n${RENDERED.slice(from + '  namespace: istio-ingress\n'.length)}`;
}

/** The chart's gateway Service as a document of its own, in `namespace` (written by `metadataLine`). */
function serviceIn(metadataLine: string): string {
  const from = RENDERED.indexOf('kind: Service\n');
  const start = RENDERED.lastIndexOf('---', from);
  const end = RENDERED.indexOf('\n---', from);
  const service = RENDERED.slice(start, end + 1);
  return service.replace('  name: igw-public\n  namespace: istio-ingress\n', `  name: igw-public\n${metadataLine}\n`);
}

test('a namespace hidden in a merge key (`<<: {namespace: kube-system}`) is the one checked: the gateway Deployment is refused, as kubectl would apply it in kube-system', () => {
  const input = deploymentNamespace('  <<: {namespace: kube-system}');
  const r = postRender(input);
  assert.equal(r.status, 2, r.stdout.slice(0, 300));
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /Deployment\/kube-system\/igw-public is in namespace 'kube-system' but the spec's metadata\.namespace is 'istio-ingress'/);
});

test('a document with a merge key is never rewritten (writing the merged object back would drop the merge): refused, naming the line', () => {
  const input = deploymentNamespace('  <<: {namespace: istio-ingress}');
  const line = input.split('\n').findIndex((l) => l === '  <<: {namespace: istio-ingress}') + 1;
  const r = postRender(input);
  assert.equal(r.status, 2);
  assert.equal(r.stdout, '');
  assert.match(
    r.stderr,
    new RegExp(
      `Deployment/istio-ingress/igw-public \\(document \\d+\\) uses a '<<' merge key \\(line ${line}\\): gracegate does not rewrite a document that holds one`,
    ),
  );
});

test("a Service of another namespace that selects the gateway's labels is not touched, byte for byte, whether its namespace is written out or merged in", () => {
  for (const metadataLine of ['  namespace: tenant-b', '  <<: {namespace: tenant-b}']) {
    const other = serviceIn(metadataLine).replace('\n  name: igw-public\n', '\n  name: tenant-b-front\n');
    const r = postRender(RENDERED + other);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.includes(other.replace(/^---\n/, '')), `${metadataLine}: the other namespace's Service is as it was`);
    const docs = parseAllDocuments(r.stdout, { merge: true }).map((d) => d.toJS());
    const own = docs.find((o) => o?.kind === 'Service' && o.metadata.name === 'igw-public');
    assert.equal(own.spec.externalTrafficPolicy, 'Local', "the gateway's own Service still gets the plan's traffic policy");
  }
});

test('a key given twice is refused in one pass, naming its line; the counted work is an upper bound of the nodes the parser makes', () => {
  const input = RENDERED.replace('  annotations:\n    owner: sre\n', '  annotations:\n    owner: sre\n    owner: tenant\n');
  assert.notEqual(input, RENDERED);
  const line = input.split('\n').findIndex((l) => l === '    owner: tenant') + 1;
  const r = postRender(input);
  assert.equal(r.status, 2);
  assert.match(r.stderr, new RegExp(`stdin: document \\d+ \\(line ${line}\\): the key 'owner' is given twice in one mapping: keys must be unique`));
  // yamlWork never counts fewer nodes than the parser makes, over shapes that pack nodes densely.
  const samples = [
    RENDERED,
    '[[[[a]]]]',
    '- - - - a',
    '{"a":1,"b":[1,2,{"c":3}]}',
    '["a":1,"b":2]',
    '? a\n: b\n? c\n: d\n',
    'a: &x {b: 1}\nc: *x\n',
    '--- |\n  text, with: commas\n---\n- a: b\n  c: d\n',
    'a:\n  - b: c\n    d: [e, f]\n',
  ];
  for (const text of samples) {
    let nodes = 0;
    for (const doc of parseAllDocuments(text)) {
      const walk = (n: unknown): void => {
        if (n === null || typeof n !== 'object') return;
        const node = n as { items?: unknown[]; key?: unknown; value?: unknown };
        if ('items' in node && Array.isArray(node.items)) {
          nodes++;
          for (const item of node.items) walk(item);
        } else if ('key' in node && 'value' in node) {
          walk(node.key);
          walk(node.value);
        } else nodes++;
      };
      walk(doc.contents);
    }
    assert.ok(2 * (yamlWork(text).nodes + 1) >= nodes, `${JSON.stringify(text.slice(0, 40))}: ${nodes} nodes, counted ${yamlWork(text).nodes}`);
  }
});

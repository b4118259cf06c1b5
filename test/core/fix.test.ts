import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDocument } from 'yaml';
import { applyFix, applyFixToYaml, describeFix, removeAt, setAt, specPath, type Fix } from '../../src/core/fix';

const fix: Fix = {
  description: 'surge beside the old pod',
  edits: [setAt(specPath('spec.rollout.maxSurge'), 1), setAt(specPath('spec.rollout.antiAffinity'), 'preferred'), removeAt(specPath('spec.drain.timeout'))],
};

test('applyFix sets values (creating maps on the way), removes keys, and leaves the input alone', () => {
  const input = { spec: { replicas: 1, drain: { timeout: 30, lbMargin: 6 } } };
  const out = applyFix(input, fix);
  assert.deepEqual(out, { spec: { replicas: 1, drain: { lbMargin: 6 }, rollout: { maxSurge: 1, antiAffinity: 'preferred' } } });
  assert.deepEqual(input, { spec: { replicas: 1, drain: { timeout: 30, lbMargin: 6 } } });
  // Removing below a map that is not there is already done.
  assert.deepEqual(applyFix({ spec: {} }, { description: 'x', edits: [removeAt(['spec', 'drain', 'timeout'])] }), { spec: {} });
  // Keys with dots (manifest annotations) are one key each, list items are numbers.
  const manifest = { metadata: { annotations: { 'proxy.istio.io/config': '{}' } }, spec: { containers: [{ name: 'a' }, { name: 'b' }] } };
  assert.deepEqual(
    applyFix(manifest, {
      description: 'y',
      edits: [setAt(['metadata', 'annotations', 'proxy.istio.io/config'], 'x'), setAt(['spec', 'containers', 1, 'image'], 'i')],
    }),
    { metadata: { annotations: { 'proxy.istio.io/config': 'x' } }, spec: { containers: [{ name: 'a' }, { name: 'b', image: 'i' }] } },
  );
  assert.throws(() => applyFix({ spec: 3 }, fix), /spec\.rollout\.maxSurge runs through a value that is not a map/);
});

test('applyFixToYaml edits a YAML file in place and keeps its comments', () => {
  const doc = parseDocument('# my gateway\nspec:\n  replicas: 1   # one for now\n  drain:\n    timeout: 30\n');
  applyFixToYaml(doc, fix);
  const text = doc.toString();
  assert.match(text, /# my gateway/);
  assert.match(text, /replicas: 1 +# one for now/);
  assert.match(text, /rollout:\n {4}maxSurge: 1\n {4}antiAffinity: preferred/);
  assert.doesNotMatch(text, /timeout/);
  assert.equal(describeFix(fix), 'spec.rollout.maxSurge: 1, spec.rollout.antiAffinity: "preferred", spec.drain.timeout: (remove)');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseGatewaySpec, SpecError, type SpecProblem } from '../../src/schema/parse-spec';

import { REPO_ROOT as ROOT } from '../support/repo';
import { exampleSpecFiles } from '../support/examples';

function problemsOf(text: string): SpecProblem[] {
  try {
    parseGatewaySpec(text, 'g.yaml');
  } catch (err) {
    assert.ok(err instanceof SpecError);
    return err.problems;
  }
  assert.fail('expected a SpecError');
}

const BASE = `apiVersion: gracegate.dev/v1alpha1
kind: GracefulGateway
metadata: {name: igw}
spec:
  replicas: 2
  nodes: 2
  chart: {kind: istio-gateway, version: "1.27.9"}
  traffic: {longRequestP99Seconds: 100}
  loadBalancer:
    model: haproxy
  health: {exposure: nodePort, nodePort: 30180}
`;

test('every bundled example is a valid spec', () => {
  const files = exampleSpecFiles('GracefulGateway');
  assert.ok(files.length >= 5, 'one example per LB model');
  const models = new Set<string>();
  for (const f of files) {
    const { spec } = parseGatewaySpec(readFileSync(join(ROOT, 'examples', f), 'utf8'), f);
    models.add(spec.spec.loadBalancer.model);
  }
  assert.deepEqual([...models].sort(), ['citrix', 'envoy', 'f5', 'haproxy', 'nlb']);
});

test('omitted LB fields take the vendor defaults, and the given paths are recorded', () => {
  const { spec, given } = parseGatewaySpec(BASE);
  assert.deepEqual(spec.spec.loadBalancer, {
    model: 'haproxy',
    inter: 2,
    fall: 3,
    rise: 2,
    onMarkedDown: 'none',
    retries: 3,
    redispatch: false,
    disableOn404: false,
    retryOnEmptyResponse: false,
  });
  assert.equal(spec.metadata.namespace, 'istio-ingress');
  assert.ok(given.has('spec.loadBalancer.model'));
  assert.ok(!given.has('spec.loadBalancer.inter'));
});

test('an unknown key is an error naming its path and line', () => {
  const problems = problemsOf(BASE.replace('    model: haproxy\n', '    model: haproxy\n    intr: 2s\n'));
  assert.deepEqual(problems, [{ path: 'spec.loadBalancer.intr', line: 11, message: "unknown key; did you mean 'inter'?" }]);
});

test('an unknown key close to a known one says which it likely meant; a far one does not guess', () => {
  const near = problemsOf(BASE.replace('  nodes: 2\n', '  nodes: 2\n  replcas: 3\n').replace('  replicas: 2\n', ''));
  assert.deepEqual(near.map((p) => [p.path, p.message]).sort(), [
    ['spec.replcas', "unknown key; did you mean 'replicas'?"],
    ['spec.replicas', 'required (a whole number), or spec.autoscaling {minReplicas, maxReplicas} when an HPA scales the gateway'],
  ]);
  const citrix = problemsOf(BASE.replace('    model: haproxy\n', '    model: citrix\n    downstateflush: DISABLED\n    colour: blue\n'));
  assert.deepEqual(
    citrix.map((p) => p.message),
    ["unknown key; did you mean 'downStateFlush'?", 'unknown key'],
    'the keys of the model the block names',
  );
});

test('a missing field says it is required', () => {
  const problems = problemsOf(BASE.replace('  traffic: {longRequestP99Seconds: 100}\n', '  traffic: {}\n'));
  assert.deepEqual(
    problems.map((p) => [p.path, p.message]),
    [['spec.traffic.longRequestP99Seconds', 'required (a number or a string)']],
  );
});

test('a missing LB model says it is missing, and lists the models once', () => {
  const [problem, ...rest] = problemsOf(BASE.replace('    model: haproxy\n', '    inter: 2s\n'));
  assert.deepEqual(rest, []);
  assert.equal(problem!.path, 'spec.loadBalancer.model');
  assert.equal(problem!.message, 'required: one of citrix, f5, nlb, haproxy, envoy');
  assert.equal(problem!.message.match(/haproxy/g)!.length, 1);
});

test('every problem is reported at once, each with its field path', () => {
  const text = BASE.replace('replicas: 2', 'replicas: two')
    .replace('nodePort: 30180', 'nodePort: 80')
    .replace('    model: haproxy\n', '    model: haproxy\n    inter: 2 minutes\n');
  const problems = problemsOf(text);
  const paths = problems.map((p) => p.path).sort();
  assert.deepEqual(paths, ['spec.health.nodePort', 'spec.loadBalancer.inter', 'spec.replicas']);
  const nodePort = problems.find((p) => p.path === 'spec.health.nodePort')!;
  assert.match(nodePort.message, /outside the NodePort range 30000-32767/);
  assert.equal(nodePort.line, 12, 'the inserted inter line moves health to line 12');
  assert.match(problems.find((p) => p.path === 'spec.loadBalancer.inter')!.message, /'2 minutes' is not a duration/);
});

test('the traffic estimate inputs must be positive, and the round trip defaults to 0.5 ms', () => {
  const problems = problemsOf(
    BASE.replace('traffic: {longRequestP99Seconds: 100}', 'traffic: {longRequestP99Seconds: 100, requestsPerSecondPerPod: 0, lbToPodRoundTripMs: -1}'),
  );
  assert.deepEqual(problems.map((p) => [p.path, p.line]).sort(), [
    ['spec.traffic.lbToPodRoundTripMs', 8],
    ['spec.traffic.requestsPerSecondPerPod', 8],
  ]);
  assert.equal(parseGatewaySpec(BASE, 'g.yaml').spec.spec.traffic.lbToPodRoundTripMs, 0.5);
});

test('an unknown LB model names the allowed ones', () => {
  const problems = problemsOf(BASE.replace('model: haproxy', 'model: nginx'));
  assert.equal(problems[0]!.path, 'spec.loadBalancer.model');
  assert.match(problems[0]!.message, /citrix, f5, nlb, haproxy, envoy/);
});

test('impossible combinations land on the field to change', () => {
  const citrix = problemsOf(BASE.replace('    model: haproxy\n', '    model: citrix\n    interval: 2s\n    resptimeout: 2s\n'));
  assert.deepEqual(
    citrix.map((p) => [p.path, p.message]),
    [['spec.loadBalancer.interval', 'Citrix requires interval (2s) to exceed resptimeout (2s)']],
  );

  const hostPort = problemsOf(BASE.replace('replicas: 2', 'replicas: 3').replace('{exposure: nodePort, nodePort: 30180}', '{exposure: hostPort}'));
  assert.deepEqual(
    hostPort.map((p) => [p.path, p.message]),
    [['spec.replicas', 'hostPort allows one pod per node: replicas (3) cannot exceed nodes (2)']],
  );

  const both0 = problemsOf(BASE.replace('  health:', '  rollout: {maxSurge: 0, maxUnavailable: 0}\n  health:'));
  assert.equal(both0[0]!.path, 'spec.rollout.maxUnavailable');
  assert.match(both0[0]!.message, /cannot both be 0/);

  const trofs = problemsOf(BASE.replace('    model: haproxy\n', '    model: citrix\n    trofsCode: 200\n'));
  assert.equal(trofs[0]!.path, 'spec.loadBalancer.trofsCode');
});

test('YAML syntax errors and multi-document files are refused with a line', () => {
  const syntax = problemsOf('apiVersion: [unclosed\n');
  assert.ok(typeof syntax[0]!.line === 'number');
  assert.match(syntax[0]!.message, /^YAML:/);
  assert.match(problemsOf(`${BASE}---\n${BASE}`)[0]!.message, /exactly one YAML document, found 2/);
  assert.match(problemsOf('')[0]!.message, /^the file is empty: a spec is one YAML mapping/);
  assert.equal(problemsOf(`${BASE}---\n${BASE}`)[0]!.line, BASE.split('\n').length, 'the second document is named by its line (its ---)');
});

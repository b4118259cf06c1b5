import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SpecError, type SpecProblem } from '../../src/schema/parse-spec';
import { parseAnySpec, parseWorkloadSpec } from '../../src/schema/spec-kinds';
import { REPO_ROOT } from '../support/repo';
import { exampleSpecFiles } from '../support/examples';
import { runCli } from '../support/run-cli';
import { specFile } from '../support/workload-spec-builder';

function problemsOf(text: string): SpecProblem[] {
  try {
    parseAnySpec(text, 'w.yaml');
  } catch (err) {
    assert.ok(err instanceof SpecError);
    return err.problems as SpecProblem[];
  }
  assert.fail('expected a SpecError');
}

const BASE = `apiVersion: gracegate.dev/v1alpha1
kind: GracefulWorkload
metadata: {name: demo}
spec:
  replicas: 2
  kubernetesVersion: "1.31"
  traffic: {longRequestP99Seconds: 30}
  app:
    gracefulShutdown: true
`;

test('the bundled workload example is a valid GracefulWorkload, and the kind picks the schema', () => {
  assert.deepEqual(exampleSpecFiles('GracefulWorkload'), ['app-workload.yaml']);
  const text = readFileSync(join(REPO_ROOT, 'examples', 'app-workload.yaml'), 'utf8');
  const any = parseAnySpec(text, 'app-workload.yaml');
  assert.equal(any.kind, 'GracefulWorkload');
  const { spec, given } = parseWorkloadSpec(text);
  assert.equal(spec.spec.app.shutdownTimeout?.via, 'env');
  assert.deepEqual(spec.spec.trafficPath, { via: 'kube-proxy', mode: 'iptables' });
  assert.ok(given.has('spec.traffic.maxRequestSeconds'));
  assert.ok(!given.has('spec.termination.preStopMargin'));
  assert.equal(parseAnySpec(readFileSync(join(REPO_ROOT, 'examples', 'haproxy.yaml'), 'utf8'), 'h.yaml').kind, 'GracefulGateway');
});

test('defaults: Deployment, namespace default, kube-proxy, margins 1 s and 5 s, a PDB', () => {
  const { spec } = parseWorkloadSpec(BASE);
  assert.equal(spec.metadata.namespace, 'default');
  assert.equal(spec.spec.workload.kind, 'Deployment');
  assert.equal(spec.spec.termination.preStopMargin, 1);
  assert.equal(spec.spec.termination.exitMargin, 5);
  assert.equal(spec.spec.disruptionBudget, true);
});

test('a missing or unknown kind names the field and the kinds there are', () => {
  assert.deepEqual(problemsOf(BASE.replace('kind: GracefulWorkload\n', '')), [
    { path: 'kind', line: 1, message: 'required: one of GracefulGateway, GracefulWorkload' },
  ]);
  assert.deepEqual(problemsOf(BASE.replace('kind: GracefulWorkload', 'kind: GracefulPod')), [
    { path: 'kind', line: 2, message: "'GracefulPod' is not one of GracefulGateway, GracefulWorkload" },
  ]);
});

test('what is missing says "required", a wrong key is named with its line, and every problem comes at once', () => {
  const problems = problemsOf(BASE.replace('    gracefulShutdown: true\n', '    graceful: true\n').replace('  replicas: 2\n', ''));
  assert.deepEqual(problems.map((p) => [p.path, p.message]).sort(), [
    ['spec.app.graceful', 'unknown key'],
    ['spec.app.gracefulShutdown', 'required (true or false)'],
    ['spec.replicas', 'required (a whole number)'],
  ]);
  assert.equal(problems.find((p) => p.path === 'spec.app.graceful')!.line, 8);
});

test('a discriminated block lists its variants, and offers the key meant', () => {
  const via = problemsOf(`${BASE}  trafficPath: {via: iptables}\n`);
  assert.deepEqual(
    via.map((p) => p.message),
    ["'iptables' is not one of kube-proxy, ingress, external-lb"],
  );
  const near = problemsOf(`${BASE}  trafficPath: {via: external-lb, externalTraficPolicy: Local}\n`);
  assert.deepEqual(
    near.map((p) => [p.path, p.message]),
    [['spec.trafficPath.externalTraficPolicy', "unknown key; did you mean 'externalTrafficPolicy'?"]],
  );
});

test('impossible combinations are refused at the field to change', () => {
  const cases: Array<[string, string, RegExp]> = [
    [
      BASE.replace('gracefulShutdown: true', 'gracefulShutdown: false\n    shutdownTimeout: {via: env, name: T}'),
      'spec.app.shutdownTimeout',
      /exits at SIGTERM/,
    ],
    [
      `${BASE}  trafficPath: {via: external-lb, externalTrafficPolicy: Local}\n`,
      'spec.trafficPath.healthCheckInterval',
      /required with externalTrafficPolicy Local/,
    ],
    [`${BASE}  rollout: {antiAffinity: required}\n`, 'spec.nodes', /required with antiAffinity required/],
    [`${BASE}  workload: {kind: StatefulSet}\n  rollout: {maxSurge: 1}\n`, 'spec.rollout.maxSurge', /StatefulSet has no surge/],
    [
      BASE.replace('longRequestP99Seconds: 30}', 'longRequestP99Seconds: 30, maxRequestSeconds: 20}'),
      'spec.traffic.maxRequestSeconds',
      /at least longRequestP99Seconds/,
    ],
    [BASE.replace('"1.31"', '"1.x"'), 'spec.kubernetesVersion', /must look like 1\.31/],
    [`${BASE}    shutdownTimeout: {via: flag, name: shutdown-timeout}\n`, 'spec.app.shutdownTimeout.name', /must be a flag/],
  ];
  for (const [text, path, message] of cases) {
    const problems = problemsOf(text);
    assert.ok(
      problems.some((p) => p.path === path && message.test(p.message)),
      `${path}: ${JSON.stringify(problems)}`,
    );
  }
});

test('the CLI: exit 2 naming file, line and field; lb-config refuses a workload by name', () => {
  const file = specFile('bad.yaml', BASE.replace('  replicas: 2\n', '  replicas: two\n'));
  const bad = runCli(['plan', file]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /bad\.yaml:5: spec\.replicas: /);
  assert.equal(bad.stdout, '');
  const lb = runCli(['lb-config', 'examples/app-workload.yaml']);
  assert.equal(lb.status, 2);
  assert.match(
    lb.stderr,
    /examples\/app-workload\.yaml: kind: this command takes a GracefulGateway; a GracefulWorkload is planned and delivered by plan, synth, post-render and argocd/,
  );
  const schema = runCli(['schema', '--kind', 'GracefulWorkload']);
  assert.equal(schema.status, 0, schema.stderr);
  const json = JSON.parse(schema.stdout);
  assert.equal(json.title, 'GracefulWorkload');
  assert.deepEqual(json.properties.kind, { type: 'string', const: 'GracefulWorkload' });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../support/run-cli';
import { testDir } from '../support/tmp';

const tmp = testDir('gracegate-plan-');
function specFile(name: string, text: string): string {
  const path = join(tmp, name);
  writeFileSync(path, text);
  return path;
}

/** A spec whose loadBalancer is on line 9 and health on line 10, the lines the errors name. */
function specText(loadBalancer: string, health = '{exposure: nodePort}', nodes = 2): string {
  return `apiVersion: gracegate.dev/v1alpha1
kind: GracefulGateway
metadata: {name: igw}
spec:
  replicas: 2
  nodes: ${nodes}
  chart: {kind: istio-gateway, version: "1.27.9"}
  traffic: {longRequestP99Seconds: 10}
  loadBalancer: ${loadBalancer}
  health: ${health}
`;
}

test('plan --format json prints the whole plan for scripts', () => {
  const r = runCli(['plan', 'examples/haproxy.yaml', '--format', 'json']);
  assert.equal(r.status, 0, r.stderr);
  const plan = JSON.parse(r.stdout);
  assert.equal(plan.sequence, 'drain-first');
  for (const k of ['drainTimeoutSeconds', 'lbDetectSeconds', 'lbBufferSeconds', 'terminationDrainDurationSeconds', 'terminationGracePeriodSeconds']) {
    assert.equal(typeof plan.timings[k], 'number', k);
    assert.equal(plan.derivations[k].value, plan.timings[k]);
    assert.ok(plan.derivations[k].formula);
  }
  assert.deepEqual(
    Object.keys(plan)
      .filter((k) => ['rollout', 'timeline', 'findings'].includes(k))
      .sort(),
    ['findings', 'rollout', 'timeline'],
  );
});

test('plan text: every timing is followed by where it came from', () => {
  // Wide enough that no formula wraps (wrapping: test/cli/plan-text.test.ts).
  const r = runCli(['plan', 'examples/haproxy.yaml'], { env: { COLUMNS: '200' } });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /sequence\s+drain-first/);
  assert.match(
    r.stdout,
    /drainTimeoutSeconds\s+120s\s+= max\(ceil\(1\.2 x longRequestP99Seconds\), ceil\(2 x pollInterval\)\)\n\s+longRequestP99Seconds=100 \(spec\.traffic\.longRequestP99Seconds\)/,
  );
  assert.match(r.stdout, /terminationGracePeriodSeconds\s+190s/);
  assert.match(r.stdout, /\[4\]\s+in-flight reaches zero/);
});

test('an error finding makes plan exit 1 (and --fail-on none makes it 0)', () => {
  // F5 with service-down-action reset loses requests in every order: above a limit of one request, an error.
  const path = specFile(
    'loss-limit.yaml',
    specText('{model: f5, serviceDownAction: reset}', '{exposure: nodePort}', 3).replace(
      'traffic: {longRequestP99Seconds: 10}',
      'traffic: {longRequestP99Seconds: 10, maxExpectedLossPerTermination: 1}',
    ),
  );
  const r = runCli(['plan', path]);
  assert.equal(r.status, 1);
  assert.match(r.stdout, /error\s+expected-loss-above-limit/);
  const json = JSON.parse(runCli(['plan', path, '--format', 'json', '--fail-on', 'none']).stdout) as { findings: Array<{ id: string; message: string }> };
  assert.match(
    json.findings.find((f) => f.id === 'expected-loss-above-limit')!.message,
    /^health-first, the order with the least expected loss behind this LB, is expected to lose \d+(\.\d+)? requests per pod termination/,
  );
  assert.equal(runCli(['plan', path, '--fail-on', 'none']).status, 0);
});

test('a bad spec exits 2, names file, line and field for every problem, and prints no plan', () => {
  const path = specFile('bad.yaml', specText('{model: citrix, interval: 1s, resptimeout: 2s, colour: blue}', '{exposure: nodePort, nodePort: 40000}'));
  const r = runCli(['plan', path]);
  assert.equal(r.status, 2);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trim().split('\n').sort();
  assert.deepEqual(
    lines,
    [
      `${path}:10: spec.health.nodePort: 40000 is outside the NodePort range 30000-32767`,
      `${path}:9: spec.loadBalancer.colour: unknown key`,
      `${path}:9: spec.loadBalancer.interval: Citrix requires interval (1s) to exceed resptimeout (2s)`,
    ].sort(),
  );
});

test('a cross-field rule alone is reported on its field', () => {
  const path = specFile('citrix.yaml', specText('{model: citrix, interval: 1s, resptimeout: 2s}'));
  const r = runCli(['plan', path]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /:9: spec\.loadBalancer\.interval: Citrix requires interval \(1s\) to exceed resptimeout \(2s\)/);
});

test('usage errors exit 2 with the usage text', () => {
  const missing = runCli(['plan']);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /missing the spec file/);
  assert.match(runCli(['plan', 'examples/haproxy.yaml', '--format', 'xml']).stderr, /--format must be text, json or svg, got 'xml'/);
  assert.match(runCli(['plan', 'nope.yaml']).stderr, /nope\.yaml: cannot read: ENOENT/);
  const unknown = runCli(['frobnicate']);
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /unknown command 'frobnicate'/);
});

test('a missing file or a directory as the spec: exit 2, the path, and what is wrong in words', () => {
  const missing = runCli(['plan', 'nope.yaml']);
  assert.equal(missing.status, 2);
  assert.equal(missing.stderr, 'nope.yaml: cannot read: ENOENT (no such file)\n');
  const dir = runCli(['plan', 'examples']);
  assert.equal(dir.status, 2);
  assert.equal(dir.stderr, 'examples: cannot read: EISDIR (it is a directory; give the file in it)\n');
});

test('schema prints a JSON Schema that knows the LB models and refuses unknown keys', () => {
  const r = runCli(['schema']);
  assert.equal(r.status, 0, r.stderr);
  const schema = JSON.parse(r.stdout);
  assert.equal(schema.title, 'GracefulGateway');
  assert.equal(schema.additionalProperties, false);
  const lb = schema.properties.spec.properties.loadBalancer;
  const models = (lb.oneOf ?? lb.anyOf).map((v: { properties: { model: { const: string } } }) => v.properties.model.const).sort();
  assert.deepEqual(models, ['citrix', 'envoy', 'f5', 'haproxy', 'nlb']);
});

test('plan does not load cdk8s (start-up stays light)', () => {
  const r = runCli(['plan', 'examples/haproxy.yaml', '--format', 'json'], { env: { NODE_OPTIONS: '--require ./test/support/forbid-cdk8s.js' } });
  assert.equal(r.status, 0, r.stderr);
});

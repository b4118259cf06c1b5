/**
 * A plan gracegate calls wrong reaches no cluster (issue 48, item 5): every delivery path refuses a
 * spec with an error finding exactly as `gracegate synth` does: the same --fail-on level (default
 * error), a non-zero exit, nothing on stdout and nothing on disk. The spec is the rollout deadlock
 * (maxUnavailable 0, one pod per node, as many replicas as nodes: kubernetes#116891).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../support/repo';
import { argoCdRig, objects } from './argocd-rig';
import { run } from './tools';

const rig = argoCdRig('gracegate-refuse-');
const { tmp } = rig;
const GOOD = readFileSync(join(REPO_ROOT, 'examples/haproxy.yaml'), 'utf8');
const DEADLOCK = GOOD.replace(/\n {2}replicas: 2[^\n]*/, '\n  replicas: 3\n  rollout: {maxSurge: 1, maxUnavailable: 0}');
const RENDERED = readFileSync(join(REPO_ROOT, 'test/delivery/post-render/fixtures/rendered-1.26-like.yaml'), 'utf8');
const FINDING = /deadlock\.yaml: error rollout-surge-deadlock \(spec\.rollout\): .*\n {2}fix: /;
const CLI = join(REPO_ROOT, 'bin/gracegate.js');
const gracegate = (args: string[], input?: string) => run(process.execPath, [CLI, ...args], { cwd: tmp, ...(input !== undefined ? { input } : {}) });

writeFileSync(join(tmp, 'deadlock.yaml'), DEADLOCK);
writeFileSync(join(tmp, 'good.yaml'), GOOD);

test('the spec is one synth refuses: exit 1, nothing written (the reference the other paths are held to)', () => {
  assert.notEqual(DEADLOCK, GOOD, 'the example still has replicas: 2');
  const r = gracegate(['synth', 'deadlock.yaml', '--out', 'synth-out']);
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, FINDING);
  assert.equal(existsSync(join(tmp, 'synth-out')), false);
});

test('gracegate synth --kustomize (the Kustomize output): exit 1, no component on disk; --fail-on none writes it', () => {
  const r = gracegate(['synth', 'deadlock.yaml', '--out', 'kustomize-out', '--kustomize']);
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, FINDING);
  assert.equal(existsSync(join(tmp, 'kustomize-out')), false);
  const anyway = gracegate(['synth', 'deadlock.yaml', '--out', 'kustomize-out', '--kustomize', '--fail-on', 'none']);
  assert.equal(anyway.status, 0, anyway.stderr);
  assert.ok(existsSync(join(tmp, 'kustomize-out/kustomize/kustomization.yaml')));
});

test('gracegate post-render: exit 1, the finding and its fix on stderr, nothing on stdout; --fail-on none renders, --fail-on warning refuses what error lets through', () => {
  const r = gracegate(['post-render', '--spec', 'deadlock.yaml'], RENDERED);
  assert.equal(r.status, 1, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, FINDING);
  assert.match(r.stderr, /gracegate post-render: nothing written; fix the finding\(s\) above, or pass --fail-on none to write anyway/);
  const anyway = gracegate(['post-render', '--spec', 'deadlock.yaml', '--fail-on', 'none'], RENDERED);
  assert.equal(anyway.status, 0, anyway.stderr);
  assert.ok(objects(anyway.stdout).some((o) => o.kind === 'Deployment'));
  assert.match(anyway.stderr, /warning: deadlock\.yaml: spec\.rollout: .*rollout-surge-deadlock/);
  // The same level as synth: what synth refuses at --fail-on warning, post-render refuses too.
  const plan = JSON.parse(gracegate(['plan', 'good.yaml', '--format', 'json']).stdout) as { findings: Array<{ severity: string }> };
  const warnings = plan.findings.some((f) => f.severity === 'warning');
  const strict = gracegate(['post-render', '--spec', 'good.yaml', '--fail-on', 'warning'], RENDERED);
  const synthStrict = gracegate(['synth', 'good.yaml', '--out', 'strict-out', '--fail-on', 'warning']);
  assert.equal(strict.status, synthStrict.status, `post-render and synth agree at --fail-on warning (the example has ${warnings ? '' : 'no '}warnings)`);
  assert.equal(strict.status, warnings ? 1 : 0);
  assert.equal(gracegate(['post-render', '--spec', 'deadlock.yaml', '--fail-on', 'sometimes'], RENDERED).status, 2);
});

test("gracegate argocd generate: exit 1, the finding in Argo CD's error text, nothing on stdout; an Application cannot go below the operator's GRACEGATE_FAIL_ON", () => {
  const root = rig.repo('repo-deadlock', { 'app/gracegate.yaml': DEADLOCK, 'app/rendered.yaml': RENDERED });
  const app = join(root, 'app');
  const r = rig.generate(app, { PARAM_RENDERED: 'rendered.yaml' });
  assert.equal(r.status, 1, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /gracegate\.yaml: error rollout-surge-deadlock \(spec\.rollout\): /);
  // No way past the finding is offered to a tenant the operator holds to 'error'.
  assert.match(r.stderr, /nothing written; fix the finding\(s\) above \(the plugin's operator lets no Application deliver past them\)/);
  assert.doesNotMatch(r.stderr, /fail-on' to none/);
  // A tenant's 'none' is looser than the operator's default: refused, naming the parameter and the floor.
  const loosened = rig.generate(app, { PARAM_RENDERED: 'rendered.yaml', PARAM_FAIL_ON: 'none' });
  assert.equal(loosened.status, 2, loosened.stderr);
  assert.equal(loosened.stdout, '');
  assert.match(
    loosened.stderr,
    /plugin parameter 'fail-on' is 'none', looser than the operator's GRACEGATE_FAIL_ON=error; an Application may only make it stricter \(error, warning, info\)/,
  );
  // The same through the Application's env fallback.
  const viaEnv = rig.generate(app, { PARAM_RENDERED: 'rendered.yaml', ARGOCD_ENV_GRACEGATE_FAIL_ON: 'none' });
  assert.equal(viaEnv.status, 2, viaEnv.stderr);
  // Where the operator allows it, 'none' renders, and the refusal names that way out.
  const allowed = rig.generate(app, { PARAM_RENDERED: 'rendered.yaml', GRACEGATE_FAIL_ON: 'none' });
  assert.equal(allowed.status, 1, "the default stays 'error': an operator's none only lets an Application ask for it");
  assert.match(allowed.stderr, /fix the finding\(s\) above, or set the plugin parameter 'fail-on' to none to write anyway/);
  const anyway = rig.generate(app, { PARAM_RENDERED: 'rendered.yaml', PARAM_FAIL_ON: 'none', GRACEGATE_FAIL_ON: 'none' });
  assert.equal(anyway.status, 0, anyway.stderr);
  assert.match(anyway.stdout, /kind: Deployment/);
  // A stricter level than the operator's is the tenant's to choose.
  const strict = rig.generate(app, { PARAM_RENDERED: 'rendered.yaml', PARAM_FAIL_ON: 'warning' });
  assert.equal(strict.status, 1, strict.stderr);
  const bad = rig.generate(app, { PARAM_RENDERED: 'rendered.yaml', PARAM_FAIL_ON: 'never' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /plugin parameter 'fail-on' must be one of error, warning, info, none, got 'never'/);
  const badFloor = rig.generate(app, { PARAM_RENDERED: 'rendered.yaml', GRACEGATE_FAIL_ON: 'sometimes' });
  assert.equal(badFloor.status, 2);
  assert.match(badFloor.stderr, /GRACEGATE_FAIL_ON on the plugin's sidecar must be one of/);
});

test('cdk8s synth (the real cdk8s CLI) of an app with GracefulGateway: non-zero exit naming the finding, no manifest on disk', () => {
  const dir = join(tmp, 'cdk8s-app');
  const out = join(dir, 'dist');
  const spec = (rollout: string) => `{
    apiVersion: 'gracegate.dev/v1alpha1', kind: 'GracefulGateway', metadata: { name: 'igw', namespace: 'istio-ingress' },
    spec: { replicas: 3, nodes: 3, ${rollout} chart: { kind: 'additional-containers', version: '0.1.0' }, traffic: { longRequestP99Seconds: 100 },
      loadBalancer: { model: 'haproxy', inter: '2s', fall: 2, onMarkedDown: 'shutdown-sessions', redispatch: true },
      health: { exposure: 'nodePort', port: 18180, nodePort: 30180 } } }`;
  const app = (rollout: string) =>
    `const { App, Chart } = require('cdk8s');\nconst { GracefulGateway } = require(${JSON.stringify(join(REPO_ROOT, 'dist/src'))});\n` +
    `const app = new App({ outdir: process.env.CDK8S_OUTDIR });\nconst chart = new Chart(app, 'gateway');\n` +
    `new GracefulGateway(chart, 'igw', { spec: ${spec(rollout)} });\napp.synth();\n`;
  const cdk8s = join(REPO_ROOT, 'node_modules/.bin/cdk8s');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cdk8s.yaml'), 'language: typescript\napp: node app.js\n');
  writeFileSync(join(dir, 'app.js'), app('rollout: { maxSurge: 1, maxUnavailable: 0 },'));
  const r = run(cdk8s, ['synth', '--check-upgrade=false', '--output', out], {
    cwd: dir,
    timeoutMs: 120_000,
    env: { NODE_PATH: join(REPO_ROOT, 'node_modules') },
  });
  assert.notEqual(r.status, 0, `cdk8s synth succeeded: ${r.stdout}`);
  assert.match(`${r.stdout}${r.stderr}`, /error rollout-surge-deadlock \(spec\.rollout\)/);
  assert.deepEqual(existsSync(out) ? readdirSync(out) : [], [], 'nothing written');
  // The same app without the deadlock synthesizes.
  writeFileSync(join(dir, 'app.js'), app(''));
  const ok = run(cdk8s, ['synth', '--check-upgrade=false', '--output', out], {
    cwd: dir,
    timeoutMs: 120_000,
    env: { NODE_PATH: join(REPO_ROOT, 'node_modules') },
  });
  assert.equal(ok.status, 0, ok.stderr);
  assert.deepEqual(readdirSync(out), ['gateway.k8s.yaml']);
});

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { CLI, HELMS } from '../emit/helpers';
import { gatewayChart } from '../support/fixtures';
import { REPO_ROOT, runCli } from '../support/run-cli';
import { traps } from './helpers';

const work = mkdtempSync(join(tmpdir(), 'gracegate-lint-cli-'));
after(() => rmSync(work, { recursive: true, force: true }));

const trap = (rule: string) => traps().find((t) => t.rule === rule)!;

describe('gracegate lint: the command', () => {
  it('exit 1 on an error finding, text grouped by object with rule, field, line, numbers and fix', () => {
    const t = trap('grace-period-short');
    const r = runCli(['lint', t.file, ...t.flags]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(
      r.stdout,
      /^Deployment\/ingress\/gw\n {2}ERROR {3}grace-period-short {2}spec\.template\.spec\.terminationGracePeriodSeconds {2}\S+grace-period-short\.yaml:12\n/,
    );
    assert.match(r.stdout, /preStopSleep = 60 {2}\(Deployment\/ingress\/gw istio-proxy preStop\)/);
    assert.match(r.stdout, /formula: terminationGracePeriodSeconds >= preStopSleep \+ terminationDrainDuration/);
    assert.match(r.stdout, /fix: set terminationGracePeriodSeconds to at least 65/);
    assert.match(r.stdout, /1 finding \(1 error, 0 warning, 0 info\) in 1 object/);
  });

  it('exit 0 below --fail-on, and for a clean input; json keeps the contract names', () => {
    const t = trap('lb-detection-unknown');
    assert.equal(runCli(['lint', t.file]).status, 0);
    assert.equal(runCli(['lint', t.file, '--fail-on', 'info']).status, 1);
    const r = runCli(['lint', t.file, '--format', 'json']);
    const json = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(json.findings[0]).slice(0, 4), ['rule', 'severity', 'object', 'field']);
    assert.equal(json.findings[0].object, 'Deployment/ingress/gw');
    assert.equal(typeof json.findings[0].message, 'string');
    const clean = runCli(['lint', t.file, '--lb', 'haproxy']);
    assert.equal(clean.status, 0);
    assert.match(clean.stdout, /^no findings in 1 object\n$/);
  });

  it('reads directories (recursively, .yaml/.yml) and stdin together', () => {
    const dir = join(work, 'tree');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    writeFileSync(join(dir, 'sub', 'a.yml'), trap('hpa-with-replicas').text);
    writeFileSync(join(dir, 'notes.txt'), 'not yaml: [');
    const r = runCli(['lint', dir, '-', '--format', 'json', '--fail-on', 'none'], { input: trap('proxy-not-held').text });
    assert.equal(r.status, 0, r.stderr);
    const files = JSON.parse(r.stdout)
      .findings.map((f: { file: string; rule: string }) => `${f.rule}@${f.file}`)
      .sort();
    assert.deepEqual(files, [`hpa-with-replicas@${join(dir, 'sub', 'a.yml')}`, 'proxy-not-held@stdin']);
  });

  it('bad input is exit 2 naming the file and line, with nothing on stdout', () => {
    const bad = join(work, 'bad.yaml');
    writeFileSync(bad, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: [b\n');
    const r = runCli(['lint', bad]);
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, new RegExp(`${bad}:\\d+: malformed YAML`));
    const notK8s = join(work, 'values.yaml');
    writeFileSync(notK8s, '# values\nreplicaCount: 2\n');
    const r2 = runCli(['lint', notK8s]);
    assert.equal(r2.status, 2);
    assert.match(r2.stderr, new RegExp(`${notK8s}:2: document 1 is not a Kubernetes object \\(apiVersion, kind, metadata.name required\\)`));
    const dup = join(work, 'dup.yaml');
    writeFileSync(dup, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: "1"}\ndata: {y: "2"}\n');
    assert.equal(runCli(['lint', dup]).status, 2);
    const missing = runCli(['lint', join(work, 'nope.yaml')]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /cannot read: ENOENT \(no such file\)/);
    const empty = runCli(['lint', '-'], { input: '# nothing\n---\n' });
    assert.equal(empty.status, 2);
    assert.match(empty.stderr, /no Kubernetes objects in -/);
  });

  it('a Helm chart directory is refused with the command that renders it', () => {
    const r = runCli(['lint', 'charts/gateway-additional-containers']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /is a Helm chart.*helm template NAME charts\/gateway-additional-containers \| gracegate lint -/);
  });

  it("synth's own output: what to render first, and the command it names lints clean (issue 49)", () => {
    const out = join(work, 'synth-out');
    const spec = join(REPO_ROOT, 'examples', 'haproxy.yaml');
    assert.equal(runCli(['synth', spec, '--out', out]).status, 0);
    const r = runCli(['lint', out]);
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.doesNotMatch(r.stderr, /is not a Kubernetes object/);
    const advice = /the objects beside the pods: (helm template .*)$/m.exec(r.stderr)?.[1];
    assert.ok(advice, r.stderr);
    assert.equal(
      advice,
      `helm template igw-public istio/gateway --version 1.27.9 -n istio-ingress -f ${join(out, 'values-overlay.yaml')} | gracegate lint - ${join(out, 'manifests.yaml')} --spec SPEC.yaml`,
    );
    // Run as written, with the chart from the fixtures instead of Istio's repository and this checkout's gracegate.
    const command = advice
      .replace('istio/gateway --version 1.27.9', gatewayChart('1.27.9'))
      .replace('gracegate lint', `"${process.execPath}" "${CLI}" lint`)
      .replace('SPEC.yaml', spec);
    const run = spawnSync('sh', ['-c', command], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, PATH: `${dirname(HELMS['helm 3.17'])}:${process.env.PATH}` },
    });
    assert.equal(run.status, 0, run.stderr + run.stdout);
    assert.match(run.stdout, /^no findings in \d+ objects\n$/);
    // A tree of outputs says to pick one gateway's directory.
    const tree = join(work, 'synth-tree-out');
    mkdirSync(tree);
    writeFileSync(join(tree, '.gracegate-synth-tree.json'), '{"writtenBy": "gracegate synth", "gateways": []}\n');
    assert.match(runCli(['lint', tree]).stderr, /what gracegate synth wrote.*lint one gateway's directory of it/);
  });

  it("flags: --lb in the vendor's words (errors name the field), --spec or --lb, not both; unknown format", () => {
    const t = trap('lb-detection-unknown');
    const r = runCli(['lint', t.file, '--lb', 'haproxy,fall=zero']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--lb fall: /);
    assert.match(runCli(['lint', t.file, '--lb', 'netscaler']).stderr, /--lb model: /);
    assert.match(runCli(['lint', t.file, '--lb', 'haproxy,inter']).stderr, /--lb: 'inter' is not field=value/);
    assert.equal(runCli(['lint', t.file, '--lb', 'haproxy', '--spec', 'examples/haproxy.yaml']).status, 2);
    assert.match(runCli(['lint', t.file, '--format', 'xml']).stderr, /--format must be text, json or sarif/);
    assert.match(runCli(['lint']).stderr, /missing the manifests/);
    const spec = runCli(['lint', t.file, '--spec', 'examples/haproxy.yaml']);
    assert.equal(spec.status, 2);
    assert.match(
      spec.stderr,
      /no workload named 'igw-public' \(namespace istio-ingress\) with a container 'istio-proxy' in the input.*Deployment\/ingress\/gw/,
    );
  });

  it('--help and the command table', () => {
    const r = runCli(['lint', '--help']);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /gracegate\.dev\/ignore: RULE-ID\[,RULE-ID\]/);
    assert.match(runCli(['--help']).stdout, /\n {2}lint {2,}find termination traps/);
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Testing } from 'cdk8s';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { GracefulGateway } from '../../src/delivery/cdk8s/constructs';
import { parseGatewaySpec } from '../../src/schema/parse-spec';
import { gatewayChart } from '../support/fixtures';
import { REPO_ROOT } from '../support/run-cli';
import { helmHome, requireTool, run, tempDir, TOOLS, withoutEmpty } from './tools';
import { testChart } from '../support/cdk8s';

/**
 * The native hc sidecar through every delivery path, on the real charts with the real helm and
 * kubectl: the istio/gateway overlay (1.27.9, 1.30.3), the in-house chart's overlay, post-render,
 * the Kustomize component and the constructs all put the same init container into the Deployment.
 */

const RELEASE = 'igw-public';
const IN_HOUSE = join(REPO_ROOT, 'charts/gateway-additional-containers');
const tmp = tempDir('gracegate-native-');
const env = helmHome(join(tmp, 'helm3'));
const CLI = join(REPO_ROOT, 'bin/gracegate.js');

type Obj = Record<string, any>;
const objects = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter((o) => o !== null);
const deploymentOf = (text: string): Obj => objects(text).find((o) => o.kind === 'Deployment' && o.metadata.name === RELEASE)!;

/** examples/haproxy.yaml on a 1.33 cluster (native by default), for a chart kind. */
function nativeSpec(chart: { kind: string; version: string }): string {
  const input = parse(readFileSync(join(REPO_ROOT, 'examples/haproxy.yaml'), 'utf8'));
  input.spec.kubernetesVersion = '1.33';
  input.spec.chart = chart;
  const path = join(tmp, `${chart.kind}-${chart.version}.yaml`);
  writeFileSync(path, stringify(input));
  return path;
}

function gracegate(args: string[], input?: string): string {
  const r = run(process.execPath, [CLI, ...args], input === undefined ? {} : { input });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

function helmTemplate(chart: string, extra: string[]): string {
  const r = run(requireTool(TOOLS.helm3), ['template', RELEASE, chart, '-n', 'istio-ingress', ...extra], { env });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

function assertNative(dep: Obj): void {
  const pod = dep.spec.template.spec;
  assert.deepEqual(
    pod.containers.map((c: Obj) => c.name),
    ['istio-proxy'],
    'the hc is not an ordinary container',
  );
  const hc = pod.initContainers.find((c: Obj) => c.name === 'gracegate-hc');
  assert.ok(hc, 'the hc is an init container');
  assert.equal(hc.restartPolicy, 'Always');
  assert.deepEqual(hc.startupProbe.httpGet, { path: '/live', port: 'hc-health', scheme: 'HTTP' });
  assert.deepEqual(hc.lifecycle.preStop, { httpGet: { path: '/hc-stopping', port: 18182, scheme: 'HTTP' } });
  assert.equal(pod.containers[0].lifecycle.preStop.httpGet.path, '/wait-closed');
}

for (const version of ['1.27.9', '1.30.3']) {
  test(`istio/gateway ${version}: the overlay, post-render and the Kustomize component give the same native sidecar`, () => {
    const spec = nativeSpec({ kind: 'istio-gateway', version });
    const out = join(tmp, `synth-${version}`);
    gracegate(['synth', spec, '--out', out, '--kustomize']);
    const chart = gatewayChart(version);
    const viaOverlay = deploymentOf(helmTemplate(chart, ['-f', join(out, 'values-overlay.yaml')]));
    assertNative(viaOverlay);

    const plain = helmTemplate(chart, ['--set', 'autoscaling.enabled=false']);
    const postRendered = gracegate(['post-render', '--spec', spec], plain);
    assert.deepEqual(deploymentOf(postRendered), viaOverlay, 'post-render and the overlay agree');

    const app = join(out, 'app');
    mkdirSync(app, { recursive: true });
    writeFileSync(join(app, 'all.yaml'), plain);
    writeFileSync(join(app, 'kustomization.yaml'), `resources: [all.yaml]\ncomponents: [../kustomize]\n`);
    const k = run(requireTool(TOOLS.kubectl), ['kustomize', app]);
    assert.equal(k.status, 0, k.stderr);
    // kubectl kustomize drops the chart's `env: null` and `annotations: {}`; nothing else may differ.
    assert.deepEqual(withoutEmpty(deploymentOf(k.stdout)), withoutEmpty(viaOverlay), 'the Kustomize component and the overlay agree');

    // Post-render on its own output changes nothing; on an ordinary-sidecar rendering it moves the hc.
    assert.equal(gracegate(['post-render', '--spec', spec], postRendered), postRendered);
    const ordinarySpec = join(tmp, `ordinary-${version}.yaml`);
    writeFileSync(ordinarySpec, readFileSync(spec, 'utf8').replace('kubernetesVersion: "1.33"', 'kubernetesVersion: "1.28"'));
    const ordinary = gracegate(['post-render', '--spec', ordinarySpec], plain);
    assert.deepEqual(
      deploymentOf(ordinary).spec.template.spec.containers.map((c: Obj) => c.name),
      ['istio-proxy', 'gracegate-hc'],
    );
    assert.deepEqual(deploymentOf(gracegate(['post-render', '--spec', spec], ordinary)), viaOverlay, 'switching kinds leaves one hc, in initContainers');
  });
}

test('istio/gateway 1.26.8 renders no initContainers: the overlay is refused, and the plan says why', () => {
  const spec = nativeSpec({ kind: 'istio-gateway', version: '1.26.8' });
  const r = run(process.execPath, [CLI, 'synth', spec, '--out', join(tmp, 'synth-126')]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /'initContainers' \(since 1\.27\)/);
  // The chart really does drop them: its schema takes the key, its template has no initContainers.
  const rendered = helmTemplate(gatewayChart('1.26.8'), ['--set', 'autoscaling.enabled=false', '--set-json', 'initContainers=[{"name":"x","image":"y"}]']);
  assert.equal(deploymentOf(rendered).spec.template.spec.initContainers, undefined);
  const plan = JSON.parse(gracegate(['plan', spec, '--format', 'json', '--fail-on', 'none']));
  assert.match(plan.findings.find((f: Obj) => f.id === 'chart-cannot-hold-proxy').message, /nor can it carry the native hc sidecar/);
});

test('the in-house chart carries the native sidecar through its initContainers value, as post-render does', () => {
  const spec = nativeSpec({ kind: 'additional-containers', version: '0.1.0' });
  const out = join(tmp, 'synth-in-house');
  gracegate(['synth', spec, '--out', out]);
  const viaOverlay = deploymentOf(helmTemplate(IN_HOUSE, ['-f', join(out, 'values-overlay.yaml')]));
  assertNative(viaOverlay);
  assert.deepEqual(deploymentOf(gracegate(['post-render', '--spec', spec], helmTemplate(IN_HOUSE, []))), viaOverlay);
});

test('the constructs synthesise the same native sidecar', () => {
  const spec = nativeSpec({ kind: 'istio-gateway', version: '1.27.9' });
  const chart = testChart();
  const gw = new GracefulGateway(chart, 'gw', { spec: parseGatewaySpec(readFileSync(spec, 'utf8'), spec) });
  const dep = Testing.synth(chart).find((o: Obj) => o.kind === 'Deployment')!;
  assertNative(dep);
  assert.deepEqual(dep.spec.template.spec.initContainers, [gw.changes.hcContainer]);
});

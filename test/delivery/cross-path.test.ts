/**
 * Every delivery path, given the same spec, puts the same pod changes on the same Deployment. The
 * chart's paths go through the real renderers a user runs: helm 3 with the values overlay, helm 3
 * with the post-renderer script, helm 3 with Kustomize as its post-renderer (kubectl kustomize), and
 * `gracegate argocd generate` as Argo CD's CMP server runs it (helm inside); each must give the
 * same Deployment. The constructs build their own Deployment, and istiod deploys a Gateway API
 * gateway itself (its golden Deployment, patched with the parameters ConfigMap by kubectl's
 * strategic merge): each must carry every field the pod changes set. The table of renderers is
 * keyed by the registry's path names, so a new path does not compile without one.
 */
import { test } from 'node:test';
import { Testing } from 'cdk8s';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { GracefulGateway } from '../../src/delivery/library';
import { DELIVERY_PATHS, type DeliveryPathName } from '../../src/delivery/registry';
import { planGateway } from '../../src/plan/plan-gateway';
import { podChanges, type PodChanges } from '../../src/pod/pod-changes';
import { parseGatewaySpec } from '../../src/schema/parse-spec';
import { differences, expectedPod, leafCount } from '../proof/cluster/delivery/live-fields';
import { testChart } from '../support/cdk8s';
import { gatewayApiGoldens, gatewayChart } from '../support/fixtures';
import { REPO_ROOT } from '../support/repo';
import { argoCdEnv } from './argocd-env';
import { helmHome, requireTool, run, tempDir, TOOLS, withoutEmpty } from './tools';

type Obj = Record<string, any>;

const VERSION = '1.27.9';
const RELEASE = 'igw-public';
const NAMESPACE = 'istio-ingress';
const CLI = join(REPO_ROOT, 'bin/gracegate.js');
const PLUGINS = join(REPO_ROOT, 'plugins');
const tmp = tempDir('gracegate-cross-path-');
const helmEnv = helmHome(join(tmp, 'helm'));

/** The spec every path is given: the bundled HAProxy example, on the istio/gateway chart. */
const SPEC = join(REPO_ROOT, 'examples/haproxy.yaml');
/**
 * The same gateway deployed by istiod from a Gateway (chart.kind gateway-api), for the Gateway API
 * path: named as the Gateway istiod's golden Deployment was rendered for (`default/default`).
 */
function gatewayApiSpec(): string {
  const input = parse(readFileSync(SPEC, 'utf8')) as Obj;
  input.metadata = { name: 'default', namespace: 'default' };
  input.spec.chart = { kind: 'gateway-api', version: VERSION, gatewayClassName: 'istio' };
  const path = join(tmp, 'gateway-api.yaml');
  writeFileSync(path, stringify(input));
  return path;
}

const objects = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter((o) => o !== null && typeof o === 'object');
const deploymentOf = (text: string, name = RELEASE): Obj => {
  const dep = objects(text).find((o) => o.kind === 'Deployment' && o.metadata.name === name);
  assert.ok(dep, `no Deployment ${name} in:\n${text.slice(0, 400)}`);
  return dep;
};
const changesOf = (spec: string): PodChanges => podChanges(planGateway(parseGatewaySpec(readFileSync(spec, 'utf8'), spec)));

function ok(r: { status: number | null; stdout: string; stderr: string }, what: string): string {
  assert.equal(r.status, 0, `${what}: ${r.stderr}`);
  return r.stdout;
}
const gracegate = (args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
  ok(run(process.execPath, [CLI, ...args], { ...options, timeoutMs: 90_000 }), `gracegate ${args.join(' ')}`);
const helm = (args: string[]) =>
  ok(
    run(requireTool(TOOLS.helm3), ['template', RELEASE, gatewayChart(VERSION), '-n', NAMESPACE, ...args], { env: helmEnv }),
    `helm template ${args.join(' ')}`,
  );

let synthDir: string | undefined;
/** `gracegate synth --kustomize` of the spec, once. */
function synth(): string {
  synthDir ??= join(tmp, 'synth');
  gracegate(['synth', SPEC, '--out', synthDir, '--kustomize']);
  return synthDir;
}

/** An app repository as Argo CD's CMP server lays it out: the spec, the chart and a values file. */
function argoCdRepo(): string {
  const root = join(tmp, 'repo');
  const app = join(root, 'gateways', 'public');
  mkdirSync(app, { recursive: true });
  cpSync(gatewayChart(VERSION), join(root, 'charts', 'gateway'), { recursive: true });
  writeFileSync(join(app, 'gracegate.yaml'), readFileSync(SPEC, 'utf8'));
  // The chart's HPA off, as the overlay turns it off: the spec has a fixed count.
  writeFileSync(join(app, 'no-hpa.yaml'), 'autoscaling:\n  enabled: false\n');
  return app;
}

type Rendered = { deployment: Obj; changes: PodChanges; on: 'the chart' | 'its own' | "istiod's golden" };

/** How each path's Deployment is made, as a user of the path makes it. */
const RENDER: { readonly [N in DeliveryPathName]: () => Rendered } = {
  'helm-values': () => ({ deployment: deploymentOf(helm(['-f', join(synth(), 'values-overlay.yaml')])), changes: changesOf(SPEC), on: 'the chart' }),
  'post-render': () => ({
    deployment: deploymentOf(
      helm(['--set', 'autoscaling.enabled=false', '--post-renderer', join(PLUGINS, 'post-render/post-render.sh'), '--post-renderer-args', `--spec=${SPEC}`]),
    ),
    changes: changesOf(SPEC),
    on: 'the chart',
  }),
  kustomize: () => {
    const component = join(synth(), 'kustomize');
    const text = ok(
      run(
        requireTool(TOOLS.helm3),
        [
          'template',
          RELEASE,
          gatewayChart(VERSION),
          '-n',
          NAMESPACE,
          '--set',
          'autoscaling.enabled=false',
          '--post-renderer',
          join(PLUGINS, 'kustomize/helm-post-renderer.sh'),
          '--post-renderer-args',
          component,
        ],
        { env: { ...helmEnv, KUBECTL: requireTool(TOOLS.kubectl) } },
      ),
      'helm template with Kustomize as the post-renderer',
    );
    return { deployment: deploymentOf(text), changes: changesOf(SPEC), on: 'the chart' };
  },
  argocd: () => {
    const env = argoCdEnv({
      parameters: [
        { name: 'chart', string: '../../charts/gateway' },
        { name: 'values-files', array: ['no-hpa.yaml'] },
      ],
    });
    const text = gracegate(['argocd', 'generate'], {
      cwd: argoCdRepo(),
      env: {
        ...env,
        ...helmEnv,
        GRACEGATE_HELM: requireTool(TOOLS.helm3),
        ARGOCD_APP_NAME: RELEASE,
        ARGOCD_APP_NAMESPACE: NAMESPACE,
        ARGOCD_APP_SOURCE_PATH: 'gateways/public',
        KUBE_VERSION: '1.31.9',
      },
    });
    return { deployment: deploymentOf(text), changes: changesOf(SPEC), on: 'the chart' };
  },
  cdk8s: () => {
    const chart = testChart();
    const gw = new GracefulGateway(chart, 'gw', { spec: parseGatewaySpec(readFileSync(SPEC, 'utf8'), SPEC) });
    const deployment = Testing.synth(chart).find((o: Obj) => o.kind === 'Deployment');
    assert.ok(deployment, 'the construct synthesises a Deployment');
    return { deployment, changes: gw.changes, on: 'its own' };
  },
  'gateway-api': () => {
    const spec = gatewayApiSpec();
    const dir = join(tmp, 'synth-api');
    gracegate(['synth', spec, '--out', dir]);
    const params = objects(readFileSync(join(dir, 'gateway-parameters.yaml'), 'utf8'))[0]!;
    const golden = objects(readFileSync(join(gatewayApiGoldens(VERSION), 'simple.yaml'), 'utf8')).find((o) => o.kind === 'Deployment')!;
    const file = join(tmp, 'golden-deployment.yaml');
    writeFileSync(file, stringify(golden));
    const patched = ok(
      run(requireTool(TOOLS.kubectl), [
        'patch',
        '--local',
        '-f',
        file,
        '--type',
        'strategic',
        '-p',
        JSON.stringify(parse(params.data.deployment)),
        '-o',
        'json',
      ]),
      'kubectl patch --local --type strategic',
    );
    return { deployment: JSON.parse(patched) as Obj, changes: changesOf(spec), on: "istiod's golden" };
  },
};

const rendered = new Map<DeliveryPathName, Rendered>();
const renderedBy = (path: DeliveryPathName): Rendered => {
  if (!rendered.has(path)) rendered.set(path, RENDER[path]());
  return rendered.get(path)!;
};

test('the table of renderers names every path of the registry', () => {
  assert.deepEqual(Object.keys(RENDER).sort(), Object.keys(DELIVERY_PATHS).sort());
});

for (const path of Object.keys(RENDER) as DeliveryPathName[]) {
  test(`${path}: the Deployment carries every field the pod changes set`, () => {
    const { deployment, changes } = renderedBy(path);
    const want = expectedPod(changes);
    assert.ok(leafCount(want) > 40, 'the comparison covers the hc container, the hold, volumes, grace period, affinity, annotations');
    assert.deepEqual(differences(want, deployment.spec.template, `${path}: Deployment/${deployment.metadata.name}`), []);
    if (changes.replicas !== null) assert.equal(deployment.spec.replicas, changes.replicas, 'replicas');
    assert.deepEqual(deployment.spec.strategy, changes.strategy, 'strategy');
  });
}

test("the chart's paths (values overlay, post-render, Kustomize, Argo CD) give the same Deployment, through the real renderers", () => {
  const chartPaths = (Object.keys(RENDER) as DeliveryPathName[]).filter((p) => renderedBy(p).on === 'the chart');
  assert.deepEqual(chartPaths.sort(), ['argocd', 'helm-values', 'kustomize', 'post-render']);
  const [first, ...rest] = chartPaths;
  // kubectl kustomize drops the chart's `env: null` and `annotations: {}`; nothing else may differ.
  for (const p of rest) assert.deepEqual(withoutEmpty(renderedBy(p).deployment), withoutEmpty(renderedBy(first!).deployment), `${p} and ${first}`);
});

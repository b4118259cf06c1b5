import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { containerOf, validateK8s } from '../emit/helpers';
import { gatewayApiGoldens, gatewayApiVersion, gatewayChart } from '../support/fixtures';
import { REPO_ROOT } from '../support/repo';
import { requireTool, run, tempDir, TOOLS } from './tools';

/*
 * Issue 19, proved against Istio's own output: the golden outputs of istiod's Gateway API
 * deployment controller at 1.27.9 (istio/istio pilot/pkg/config/kube/gateway/testdata/deployment/;
 * on a clone without the shared fixtures, release-1.31's from Istio's source, with its chart)
 * patched with gracegate's ConfigMap keys by the real `kubectl patch --local --type strategic`, the
 * strategic-merge library istiod applies them with.
 */

type Obj = Record<string, any>;
const ISTIO = gatewayApiVersion();
const GOLDEN = gatewayApiGoldens(ISTIO);
const CLI = join(REPO_ROOT, 'bin/gracegate.js');
const tmp = tempDir('gracegate-gateway-api-');
const objects = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter((o) => o !== null && typeof o === 'object');
const golden = (file: string, kind: string): Obj => objects(readFileSync(join(GOLDEN, file), 'utf8')).find((o) => o.kind === kind)!;

/** The bundled example (Gateway igw-api, HPA 2-4, F5 health-first), and the same with a fixed count. */
const EXAMPLE = join(REPO_ROOT, 'examples/gateway-api.yaml');
function variant(name: string, edit: (text: string) => string): string {
  const path = join(tmp, `${name}.yaml`);
  writeFileSync(path, edit(readFileSync(EXAMPLE, 'utf8')));
  return path;
}
const FIXED = variant('fixed', (t) => t.replace(/  autoscaling:[\s\S]*?maxReplicas: 4\n/, '  replicas: 3\n'));

type Synth = { dir: string; stdout: string; params: Obj; plan: Obj };
const synthRuns = new Map<string, Synth>();

/** `gracegate synth` of `spec` into its own directory; the same invocation runs once per file. */
function synth(spec: string, name: string, extra: string[] = []): Synth {
  const key = JSON.stringify([spec, extra]);
  const done = synthRuns.get(key);
  if (done) return done;
  const dir = join(tmp, name);
  const r = run(process.execPath, [CLI, 'synth', spec, '--out', dir, ...extra]);
  assert.equal(r.status, 0, r.stderr);
  const params = objects(readFileSync(join(dir, 'gateway-parameters.yaml'), 'utf8'))[0]!;
  const out = { dir, stdout: r.stdout, params, plan: JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8')) };
  synthRuns.set(key, out);
  return out;
}

/** `kubectl patch --local --type strategic`: the patch (a ConfigMap key's YAML) applied to `object`. */
function kubectlPatch(object: Obj, patchYaml: string): Obj {
  const file = join(tmp, `obj-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, stringify(object));
  const r = run(requireTool(TOOLS.kubectl), ['patch', '--local', '-f', file, '--type', 'strategic', '-p', JSON.stringify(parse(patchYaml)), '-o', 'json']);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** Where two objects differ: paths, with list items named by `name` where they have one. */
function changedPaths(before: unknown, after: unknown, path = ''): string[] {
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  const isMap = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isMap(before) && isMap(after)) {
    return [...new Set([...Object.keys(before), ...Object.keys(after)])].flatMap((k) => changedPaths(before[k], after[k], path ? `${path}.${k}` : k));
  }
  const named = (v: unknown): v is Obj[] => Array.isArray(v) && v.every((x) => isMap(x) && typeof x.name === 'string');
  if (named(before) && named(after)) {
    const names = [...new Set([...before.map((x) => x.name), ...after.map((x) => x.name)])];
    return names.flatMap((n) =>
      changedPaths(
        before.find((x) => x.name === n),
        after.find((x) => x.name === n),
        `${path}[${n}]`,
      ),
    );
  }
  return [path];
}

describe("the deployment patch on istiod's own Deployment (golden simple.yaml), with kubectl's strategic merge", () => {
  for (const [label, spec] of [
    ['HPA', EXAMPLE],
    ['fixed replicas', FIXED],
  ] as const) {
    it(`${label}: the sidecar added, istio-proxy keeps every field istiod set and gains the hold, the plan's grace period and probes, nothing else changed`, () => {
      const { params, plan } = synth(spec, `simple-${label.replace(' ', '-')}`);
      const before = golden('simple.yaml', 'Deployment');
      const after = kubectlPatch(before, params.data.deployment);
      validateK8s(after);
      const pod = after.spec.template.spec;

      const hc = containerOf(after, 'gracegate-hc');
      assert.equal(hc.readinessProbe.httpGet.path, '/health');
      assert.equal(hc.livenessProbe.httpGet.path, '/live');
      assert.deepEqual(hc.lifecycle.preStop, { httpGet: { path: '/hc-stopping', port: 18182, scheme: 'HTTP' } });
      assert.deepEqual(
        hc.volumeMounts.map((m: Obj) => m.name),
        ['gracegate-hc-config', 'gracegate-state'],
      );

      const proxyBefore = containerOf(before, 'istio-proxy');
      const proxyAfter = containerOf(after, 'istio-proxy');
      assert.deepEqual(proxyAfter.lifecycle, { preStop: { httpGet: { path: '/wait-closed', port: 18182, scheme: 'HTTP' } } });
      const { lifecycle: _hold, ...rest } = proxyAfter;
      assert.deepEqual(rest, proxyBefore, 'every field istiod set on istio-proxy is kept');

      assert.equal(pod.terminationGracePeriodSeconds, plan.timings.terminationGracePeriodSeconds);
      assert.deepEqual(after.spec.strategy, {
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: plan.rollout.maxSurge, maxUnavailable: plan.rollout.maxUnavailable },
      });
      assert.equal(after.spec.minReadySeconds, plan.timings.minReadySeconds);
      assert.equal(after.spec.replicas, plan.replicas ?? undefined);
      const term = pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0];
      assert.deepEqual(term.labelSelector.matchLabels, { 'gateway.networking.k8s.io/gateway-name': 'igw-api' });
      assert.deepEqual(after.spec.selector.matchLabels, before.spec.selector.matchLabels, "istiod's selector is untouched");
      assert.equal(after.metadata.name, before.metadata.name);

      const expected = [
        ...(plan.replicas !== null ? ['spec.replicas'] : []),
        'spec.strategy',
        'spec.minReadySeconds',
        'spec.template.metadata.annotations.proxy.istio.io/config',
        'spec.template.metadata.annotations.gracegate.dev/hc-config-hash',
        'spec.template.metadata.annotations.sidecar.istio.io/rewriteAppHTTPProbers',
        'spec.template.spec.containers[istio-proxy].lifecycle',
        'spec.template.spec.containers[gracegate-hc]',
        'spec.template.spec.volumes[gracegate-hc-config]',
        'spec.template.spec.volumes[gracegate-state]',
        'spec.template.spec.affinity',
        'spec.template.spec.terminationGracePeriodSeconds',
      ];
      assert.deepEqual(changedPaths(before, after).sort(), expected.sort());
    });
  }

  it('on a Deployment istiod already customised (golden customizations.yaml): their customisations stay, an HPA-owned count goes', () => {
    const { params } = synth(EXAMPLE, 'customized');
    const before = golden('customizations.yaml', 'Deployment');
    const after = kubectlPatch(before, params.data.deployment);
    assert.equal(before.spec.replicas, 4);
    assert.equal(after.spec.replicas, undefined, 'the HPA owns the count');
    assert.equal(after.metadata.annotations['cm-annotation'], 'cm-annotation-value');
    assert.deepEqual(containerOf(after, 'istio-proxy').resources, { requests: { cpu: '222m' } });
  });
});

describe("the HPA and PDB keys on istiod's own objects (golden customizations.yaml)", () => {
  const { params } = synth(EXAMPLE, 'hpa-pdb');
  const spec = parse(readFileSync(EXAMPLE, 'utf8')).spec;

  it("horizontalPodAutoscaler: the range; istiod's target and labels stay", () => {
    const before = golden('customizations.yaml', 'HorizontalPodAutoscaler');
    const after = kubectlPatch(before, params.data.horizontalPodAutoscaler);
    validateK8s(after);
    assert.deepEqual([after.spec.minReplicas, after.spec.maxReplicas], [spec.autoscaling.minReplicas, spec.autoscaling.maxReplicas]);
    assert.deepEqual(after.spec.scaleTargetRef, before.spec.scaleTargetRef);
    assert.deepEqual(before.spec.minReplicas, 2, 'the golden range is 2-2');
    assert.deepEqual(changedPaths(before, after), ['spec.maxReplicas'], 'nothing but the range changed');
  });

  it('podDisruptionBudget: maxUnavailable replaces a minAvailable set before (a PDB holds one of them)', () => {
    const before = golden('customizations.yaml', 'PodDisruptionBudget');
    assert.equal(before.spec.minAvailable, 1);
    const after = kubectlPatch(before, params.data.podDisruptionBudget);
    validateK8s(after);
    assert.deepEqual(after.spec, { maxUnavailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow', selector: before.spec.selector });
  });

  it('the ConfigMap has only keys istiod applies, as strings; a fixed count has no HPA key', () => {
    // service: externalTrafficPolicy Local on istiod's Service (the LB addresses nodes).
    assert.deepEqual(Object.keys(params.data).sort(), ['deployment', 'horizontalPodAutoscaler', 'podDisruptionBudget', 'service']);
    for (const v of Object.values(params.data)) assert.equal(typeof v, 'string');
    assert.deepEqual(Object.keys(synth(FIXED, 'keys-fixed').params.data).sort(), ['deployment', 'podDisruptionBudget', 'service']);
    // The health port beside the listeners' ports and 15021 (a strategic merge keyed by port), on
    // istiod's own Service: the LB's probe takes the traffic's rules (one slice, one sync).
    const before = golden('simple.yaml', 'Service');
    const after = kubectlPatch(before, params.data.service);
    assert.equal(after.spec.externalTrafficPolicy, 'Local');
    const byPort = (ports: Obj[]) => [...ports].sort((a, b) => a.port - b.port);
    assert.deepEqual(
      byPort(after.spec.ports),
      byPort([...before.spec.ports, { name: 'hc-health', protocol: 'TCP', port: 18180, targetPort: 18180, nodePort: 30182 }]),
      "istiod's ports stay, the health port beside them",
    );
  });
});

describe('synth for a Gateway API gateway', () => {
  it("writes gateway-parameters.yaml and manifests.yaml (hc ConfigMap, NetworkPolicy selecting istiod's pod label), and prints the Gateway's line", () => {
    const { dir, stdout, params } = synth(EXAMPLE, 'files');
    assert.match(stdout, /^Gateway: spec\.infrastructure\.parametersRef: \{group: "", kind: ConfigMap, name: igw-api-gracegate-parameters\}$/m);
    assert.deepEqual([params.metadata.name, params.metadata.namespace], ['igw-api-gracegate-parameters', 'istio-ingress']);
    const manifests = objects(readFileSync(join(dir, 'manifests.yaml'), 'utf8'));
    manifests.forEach(validateK8s);
    assert.deepEqual(
      manifests.map((o) => o.kind),
      ['ConfigMap', 'NetworkPolicy'],
      "no PDB: istiod makes it from the podDisruptionBudget key; no health Service: the port is on istiod's Service",
    );
    assert.deepEqual(
      manifests[1]!.spec.podSelector,
      { matchLabels: { 'gateway.networking.k8s.io/gateway-name': 'igw-api' } },
      "the NetworkPolicy selects istiod's pod label",
    );
    const volume = parse(params.data.deployment).spec.template.spec.volumes.find((v: Obj) => v.configMap);
    assert.equal(volume.configMap.name, manifests[0]!.metadata.name, 'the pods mount the ConfigMap manifests.yaml creates');
    assert.match(readFileSync(join(dir, 'PLAN.md'), 'utf8'), /Add to the Gateway: `spec.infrastructure.parametersRef/);
  });

  it(`the same pod changes through the Helm overlay (real istio/gateway ${ISTIO}) give the same pod spec where the two bases agree`, () => {
    const { params } = synth(FIXED, 'compare');
    const viaIstiod = kubectlPatch(golden('simple.yaml', 'Deployment'), params.data.deployment);
    // The same spec, delivered through the istio/gateway chart instead.
    const chartSpec = variant('as-chart', (t) =>
      t
        .replace(/    kind: gateway-api[^\n]*\n/, '    kind: istio-gateway\n')
        .replace(/    gatewayClassName:[^\n]*\n/, '')
        .replace(/  autoscaling:[\s\S]*?maxReplicas: 4\n/, '  replicas: 3\n'),
    );
    const out = join(tmp, 'compare-helm');
    const s = run(process.execPath, [CLI, 'synth', chartSpec, '--out', out]);
    assert.equal(s.status, 0, s.stderr);
    const r = run(requireTool(TOOLS.helm3), ['template', 'igw-api', gatewayChart(ISTIO), '-n', 'istio-ingress', '-f', join(out, 'values-overlay.yaml')], {
      env: { HELM_CACHE_HOME: join(tmp, 'helm'), HELM_CONFIG_HOME: join(tmp, 'helm'), HELM_DATA_HOME: join(tmp, 'helm') },
    });
    assert.equal(r.status, 0, r.stderr);
    const viaHelm = objects(r.stdout).find((o) => o.kind === 'Deployment')!;
    assert.deepEqual(containerOf(viaIstiod, 'gracegate-hc'), containerOf(viaHelm, 'gracegate-hc'));
    assert.deepEqual(containerOf(viaIstiod, 'istio-proxy').lifecycle, containerOf(viaHelm, 'istio-proxy').lifecycle);
    for (const key of ['replicas', 'strategy', 'minReadySeconds']) assert.deepEqual(viaIstiod.spec[key], viaHelm.spec[key], key);
    const [a, b] = [viaIstiod.spec.template, viaHelm.spec.template];
    assert.equal(a.spec.terminationGracePeriodSeconds, b.spec.terminationGracePeriodSeconds);
    for (const k of ['proxy.istio.io/config', 'gracegate.dev/hc-config-hash']) assert.equal(a.metadata.annotations[k], b.metadata.annotations[k], k);
    const ours = (vols: Obj[]) =>
      vols.filter((v) => v.name.startsWith('gracegate-')).map((v) => ({ ...v, configMap: v.configMap && { ...v.configMap, name: undefined } }));
    assert.deepEqual(ours(a.spec.volumes), ours(b.spec.volumes), "the same volumes (each names its own gateway's ConfigMap)");
    // Where the bases differ by design: the pod label each deployer puts on the pods.
    const sel = (d: Obj) => d.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0];
    assert.deepEqual({ ...sel(viaIstiod), labelSelector: null }, { ...sel(viaHelm), labelSelector: null });
    assert.deepEqual(sel(viaIstiod).labelSelector.matchLabels, { 'gateway.networking.k8s.io/gateway-name': 'igw-api' });
    assert.deepEqual(sel(viaHelm).labelSelector.matchLabels, { app: 'igw-api', istio: 'igw-api' });
  });

  it("--kustomize: kubectl kustomize points the user's Gateway at the ConfigMap and delivers it with the manifests", () => {
    const { dir } = synth(EXAMPLE, 'kz', ['--kustomize']);
    const app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(
      join(app, 'gateway.yaml'),
      stringify({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'igw-api', namespace: 'istio-ingress' },
        spec: { gatewayClassName: 'istio', infrastructure: { labels: { team: 'edge' } }, listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
      }),
    );
    writeFileSync(join(app, 'kustomization.yaml'), 'resources: [gateway.yaml]\ncomponents: [../kustomize]\n');
    const k = run(requireTool(TOOLS.kubectl), ['kustomize', app]);
    assert.equal(k.status, 0, k.stderr);
    const out = objects(k.stdout);
    const gw = out.find((o) => o.kind === 'Gateway')!;
    assert.deepEqual(gw.spec.infrastructure, {
      labels: { team: 'edge' },
      parametersRef: { group: '', kind: 'ConfigMap', name: 'igw-api-gracegate-parameters' },
    });
    assert.deepEqual(gw.spec.listeners, [{ name: 'http', port: 80, protocol: 'HTTP' }]);
    assert.deepEqual(
      out
        .filter((o) => o.kind !== 'Gateway')
        .map((o) => `${o.kind}/${o.metadata.name}`)
        .sort(),
      ['ConfigMap/igw-api-gracegate-hc', 'ConfigMap/igw-api-gracegate-parameters', 'NetworkPolicy/igw-api-gracegate-hc-ports'],
    );
  });
});

describe('--parameters: the ConfigMap the Gateway already names', () => {
  const userFile = (data: Record<string, string>, metadata: Obj = { name: 'gw-options', namespace: 'istio-ingress' }) => {
    const path = join(tmp, `user-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(path, stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata, data }));
    return path;
  };
  // The data of Istio's own customizations test (deploymentcontroller_test.go, "customizations").
  const ISTIO_TEST_DATA = {
    podDisruptionBudget: 'spec:\n  minAvailable: 1',
    deployment:
      'metadata:\n  annotations:\n    cm-annotation: cm-annotation-value\nspec:\n  replicas: 4\n  template:\n    spec:\n      containers:\n      - name: istio-proxy\n        resources:\n          requests:\n            cpu: 222m',
    service: 'metadata:\n  annotations:\n    team: edge',
  };

  it("merged: one patch per key doing theirs then gracegate's (checked with kubectl on the golden), their other keys kept, their name kept", () => {
    const { params, stdout } = synth(FIXED, 'merged', ['--parameters', userFile(ISTIO_TEST_DATA)]);
    assert.equal(params.metadata.name, 'gw-options');
    assert.match(stdout, /name: gw-options\}$/m);
    // service: theirs (an annotation), then gracegate's (the traffic policy), as one patch.
    const serviceBase = golden('simple.yaml', 'Service');
    assert.deepEqual(
      kubectlPatch(serviceBase, params.data.service),
      kubectlPatch(kubectlPatch(serviceBase, ISTIO_TEST_DATA.service), synth(FIXED, 'unmerged-service').params.data.service),
    );
    assert.equal(kubectlPatch(serviceBase, params.data.service).metadata.annotations.team, 'edge');
    const base = golden('simple.yaml', 'Deployment');
    const ours = synth(FIXED, 'unmerged').params.data.deployment;
    const sequential = kubectlPatch(kubectlPatch(base, ISTIO_TEST_DATA.deployment), ours);
    assert.deepEqual(kubectlPatch(base, params.data.deployment), sequential);
    assert.deepEqual(containerOf(sequential, 'istio-proxy').resources, { requests: { cpu: '222m' } });
    assert.equal(sequential.metadata.annotations['cm-annotation'], 'cm-annotation-value');
    const pdb = kubectlPatch(golden('customizations.yaml', 'PodDisruptionBudget'), params.data.podDisruptionBudget);
    assert.equal(pdb.spec.minAvailable, undefined);
  });

  it('what istiod refuses is refused first: an unsupported key, a renaming patch, a misplaced ConfigMap (exit 2, nothing written)', () => {
    const fail = (file: string, pattern: RegExp) => {
      const out = join(tmp, `refused-${Math.random().toString(36).slice(2)}`);
      const r = run(process.execPath, [CLI, 'synth', EXAMPLE, '--out', out, '--parameters', file]);
      assert.equal(r.status, 2, r.stdout);
      assert.match(r.stderr, pattern);
      assert.equal(r.stdout, '');
    };
    fail(
      userFile({ ...ISTIO_TEST_DATA, gateway: 'spec: {}' }),
      /data\.gateway: istiod refuses this key \(unsupported overlay; supported: deployment, service, serviceAccount, horizontalPodAutoscaler, podDisruptionBudget\)/,
    );
    // istio/istio's illegal_customizations test: a patch that renames the Deployment.
    fail(
      userFile({ deployment: 'metadata:\n  name: new-name' }),
      /data\.deployment: sets metadata\.name: istiod refuses any change to an object's name.*gateway\.istio\.io\/name-override/,
    );
    fail(
      userFile({ deployment: 'spec: {}' }, { name: 'x', namespace: 'elsewhere' }),
      /metadata\.namespace: 'elsewhere', but a Gateway's parametersRef names a ConfigMap in the Gateway's own namespace, 'istio-ingress'/,
    );
    fail(userFile({ deployment: '- a list' }), /data\.deployment: must be a YAML map/);
    const chart = run(process.execPath, [CLI, 'synth', join(REPO_ROOT, 'examples/haproxy.yaml'), '--out', join(tmp, 'nope'), '--parameters', userFile({})]);
    assert.equal(chart.status, 2);
    assert.match(chart.stderr, /--parameters is for spec.chart.kind gateway-api/);
  });

  it('an Istio before parametersRef support, and a proxy container istiod does not name, are errors in the spec', () => {
    const old = variant('old', (t) => t.replace('version: "1.27.9"', 'version: "1.25.2"'));
    const r = run(process.execPath, [CLI, 'plan', old]);
    assert.equal(r.status, 2);
    assert.match(
      r.stderr,
      /spec\.chart\.version: Istio 1\.25\.2 cannot carry the pod changes: istiod applies a parameters ConfigMap .* only from 1\.26 \(istio\/istio#55283\)/,
    );
    const renamed = variant('renamed-proxy', (t) => t.replace('  traffic:\n', '  envoy: {containerName: envoy}\n  traffic:\n'));
    const c = run(process.execPath, [CLI, 'plan', renamed]);
    assert.equal(c.status, 2);
    assert.match(c.stderr, /spec\.envoy\.containerName: istiod names the proxy container of a Gateway's Deployment istio-proxy/);
  });
});

describe('class-wide defaults (gateway.istio.io/defaults-for-class)', () => {
  const CLASS = variant('class', (t) =>
    t.replace(
      "    gatewayClassName: istio     # the Gateway's class (istio is istiod's own)\n",
      '    gatewayClassName: istio\n    defaultsForClass:\n      gateways: [{name: edge-a, namespace: team-a}, {name: edge-b, namespace: team-a}, {name: edge-c, namespace: team-c}]\n',
    ),
  );

  it("one plan for every Gateway of the class: the ConfigMap in istiod's namespace with the class label, a NetworkPolicy per Gateway, the hc ConfigMap per namespace", () => {
    const r = run(process.execPath, [CLI, 'synth', CLASS, '--out', join(tmp, 'class'), '--fail-on', 'none']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Gateway: every Gateway with gatewayClassName: istio gets these patches/);
    const params = objects(readFileSync(join(tmp, 'class', 'gateway-parameters.yaml'), 'utf8'))[0]!;
    assert.equal(params.metadata.namespace, 'istio-system');
    assert.equal(params.metadata.labels['gateway.istio.io/defaults-for-class'], 'istio');
    const manifests = objects(readFileSync(join(tmp, 'class', 'manifests.yaml'), 'utf8'));
    manifests.forEach(validateK8s);
    assert.deepEqual(
      manifests.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`),
      [
        'ConfigMap/team-a/igw-api-gracegate-hc',
        'NetworkPolicy/team-a/edge-a-gracegate-hc-ports',
        'NetworkPolicy/team-a/edge-b-gracegate-hc-ports',
        'ConfigMap/team-c/igw-api-gracegate-hc',
        'NetworkPolicy/team-c/edge-c-gracegate-hc-ports',
      ],
    );
    assert.match(params.data.service, /name: hc-health/, "the health port on each Gateway's own Service, by the class defaults");
    assert.deepEqual(
      manifests[2]!.spec.podSelector,
      { matchLabels: { 'gateway.networking.k8s.io/gateway-name': 'edge-b' } },
      "each Gateway's NetworkPolicy selects its pods",
    );
    // The anti-affinity cannot name a Gateway: the scheduler adds each pod's own gateway name.
    const after = kubectlPatch(golden('simple.yaml', 'Deployment'), params.data.deployment);
    validateK8s(after);
    const term = after.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0];
    assert.deepEqual(term.matchLabelKeys, ['gateway.networking.k8s.io/gateway-name']);
    assert.deepEqual(term.labelSelector, { matchExpressions: [{ key: 'gateway.networking.k8s.io/gateway-name', operator: 'Exists' }] });
    const plan = JSON.parse(readFileSync(join(tmp, 'class', 'plan.json'), 'utf8'));
    const ids = plan.findings.map((f: Obj) => f.id);
    assert.ok(ids.includes('gateway-api-class-one-plan'));
    assert.ok(ids.includes('gateway-api-class-fixed-node-port'), 'nodePort 30182 for three Gateways');
    assert.ok(ids.includes('gateway-api-class-anti-affinity-match-label-keys'));
  });
});

describe('post-render and Argo CD deliver the ConfigMap like any other manifest', () => {
  const GATEWAY = stringify({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'igw-api', namespace: 'istio-ingress' },
    spec: { gatewayClassName: 'istio', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  });
  const postRender = (input: string, spec = EXAMPLE) => run(process.execPath, [CLI, 'post-render', '--spec', spec], { input });

  it('post-render: the Gateway gets the parametersRef, the ConfigMaps and the NetworkPolicy are appended; idempotent', () => {
    const r = postRender(GATEWAY);
    assert.equal(r.status, 0, r.stderr);
    const out = objects(r.stdout);
    assert.deepEqual(out.find((o) => o.kind === 'Gateway')!.spec.infrastructure, {
      parametersRef: { group: '', kind: 'ConfigMap', name: 'igw-api-gracegate-parameters' },
    });
    const params = out.find((o) => o.metadata.name === 'igw-api-gracegate-parameters')!;
    assert.deepEqual(params, synth(EXAMPLE, 'post-render-compare').params, 'the same ConfigMap synth writes');
    assert.deepEqual(out.map((o) => o.kind).sort(), ['ConfigMap', 'ConfigMap', 'Gateway', 'NetworkPolicy']);
    assert.equal(postRender(r.stdout).stdout, r.stdout);
  });

  it('post-render refuses a Gateway that names another ConfigMap, of another class, or none at all', () => {
    const named = GATEWAY.replace(
      '  gatewayClassName: istio\n',
      '  gatewayClassName: istio\n  infrastructure:\n    parametersRef: {group: "", kind: ConfigMap, name: mine}\n',
    );
    const r = postRender(named);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /already names ConfigMap 'mine' in spec.infrastructure.parametersRef.*gracegate synth --parameters/);
    assert.match(
      postRender(GATEWAY.replace('gatewayClassName: istio', 'gatewayClassName: other')).stderr,
      /gatewayClassName 'other' but the spec plans for class 'istio'/,
    );
    assert.match(postRender(GATEWAY.replace('name: igw-api', 'name: other')).stderr, /expected one Gateway named 'igw-api'.*found 0/);
  });

  it('Argo CD generate with the Gateway as the rendered file', () => {
    const app = join(tmp, 'argocd-app');
    mkdirSync(app, { recursive: true });
    writeFileSync(join(app, 'gateway.yaml'), GATEWAY);
    writeFileSync(join(app, 'gracegate.yaml'), readFileSync(EXAMPLE, 'utf8'));
    const r = run(process.execPath, [CLI, 'argocd', 'generate'], {
      cwd: app,
      env: {
        ARGOCD_APP_NAME: 'igw-api',
        ARGOCD_APP_NAMESPACE: 'istio-ingress',
        ARGOCD_APP_PARAMETERS: JSON.stringify([{ name: 'rendered', string: 'gateway.yaml' }]),
      },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout, postRender(GATEWAY).stdout);
  });
});

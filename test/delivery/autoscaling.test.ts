import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { HELMS, containerOf, validateK8s } from '../emit/helpers';
import { gatewayChart } from '../support/fixtures';
import { REPO_ROOT } from '../support/repo';
import { run, requireTool, tempDir, TOOLS, withoutEmpty } from './tools';

/*
 * Issue 12, "autoscaling is kept": the real istio/gateway charts (1.27.9, 1.30.3, whole charts as
 * tagged) rendered by real helm 3.17 and 4.1 with their HPA on, through each delivery path; every
 * path keeps the chart's HPA with the spec's range and leaves `replicas` off the Deployment.
 */

type Obj = Record<string, any>;
const objects = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter((o) => o !== null);
const byKind = (docs: Obj[], kind: string): Obj | undefined => docs.find((o) => o.kind === kind);

const tmp = tempDir('gracegate-autoscaling-');
const RELEASE = 'igw-public';
const NS = 'istio-ingress';
const VERSIONS = ['1.27.9', '1.30.3'];
const CLI = join(REPO_ROOT, 'bin/gracegate.js');

/** The bundled autoscaled example (preferred anti-affinity, a behaviour, a CPU target), and a variant. */
const EXAMPLE = join(REPO_ROOT, 'examples/haproxy-autoscaled.yaml');
/** Required anti-affinity on 3 nodes for 2-3 replicas, Kubernetes' default behaviour, the chart's CPU target. */
const REQUIRED = join(tmp, 'required.yaml');
writeFileSync(
  REQUIRED,
  readFileSync(EXAMPLE, 'utf8').replace(/  autoscaling:[\s\S]*?  nodes: 4[^\n]*\n/, '  autoscaling: {minReplicas: 2, maxReplicas: 3}\n  nodes: 3\n'),
);

function synth(spec: string, out: string, extra: string[] = []): { overlay: string; plan: Obj } {
  const r = run(process.execPath, [CLI, 'synth', spec, '--out', out, ...extra]);
  assert.equal(r.status, 0, r.stderr);
  return { overlay: join(out, 'values-overlay.yaml'), plan: JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8')) };
}

function template(helm: string, version: string, args: string[]): string {
  const r = run(requireTool(helm), ['template', RELEASE, gatewayChart(version), '-n', NS, ...args], {
    env: { HELM_CACHE_HOME: join(tmp, 'helm'), HELM_CONFIG_HOME: join(tmp, 'helm'), HELM_DATA_HOME: join(tmp, 'helm') },
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

function postRender(spec: string, input: string): string {
  const r = run(process.execPath, [CLI, 'post-render', '--spec', spec], { input });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

function specOf(path: string): Obj {
  return parse(readFileSync(path, 'utf8')).spec;
}

for (const version of VERSIONS) {
  for (const [label, helm] of Object.entries(HELMS)) {
    describe(`istio/gateway ${version}, ${label}, HPA on`, () => {
      it("the values overlay keeps the chart's HPA with the spec's range, target and behaviour; the Deployment has no replicas; every pod change is there", () => {
        const { overlay, plan } = synth(EXAMPLE, join(tmp, `ex-${version}-${label}`));
        const docs = objects(template(helm, version, ['-f', overlay]));
        docs.forEach(validateK8s);
        const spec = specOf(EXAMPLE);
        const hpa = byKind(docs, 'HorizontalPodAutoscaler')!;
        assert.ok(hpa, 'the chart renders its HPA');
        assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: RELEASE });
        assert.equal(hpa.spec.minReplicas, spec.autoscaling.minReplicas);
        assert.equal(hpa.spec.maxReplicas, spec.autoscaling.maxReplicas);
        assert.deepEqual(hpa.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { averageUtilization: 70, type: 'Utilization' } } }]);
        assert.deepEqual(hpa.spec.behavior, spec.autoscaling.behavior);

        const dep = byKind(docs, 'Deployment')!;
        assert.equal(dep.spec.replicas, undefined, 'no replicas on a Deployment the HPA owns');
        assert.deepEqual(dep.spec.strategy, {
          type: 'RollingUpdate',
          rollingUpdate: { maxSurge: plan.rollout.maxSurge, maxUnavailable: plan.rollout.maxUnavailable },
        });
        assert.equal(dep.spec.minReadySeconds, plan.timings.minReadySeconds);
        const pod = dep.spec.template.spec;
        assert.equal(pod.terminationGracePeriodSeconds, plan.timings.terminationGracePeriodSeconds);
        assert.equal(plan.rollout.antiAffinity, 'preferred', 'maxReplicas 5 on 4 nodes');
        assert.equal(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey, 'kubernetes.io/hostname');
        assert.deepEqual(containerOf(dep, 'istio-proxy').lifecycle, { preStop: { httpGet: { path: '/wait-closed', port: 18182, scheme: 'HTTP' } } });
        assert.equal(containerOf(dep, 'gracegate-hc').lifecycle.preStop.httpGet.path, '/hc-stopping');
        assert.deepEqual(
          pod.volumes.map((v: Obj) => v.name),
          ['gracegate-hc-config', 'gracegate-state'],
        );
        assert.equal(byKind(docs, 'PodDisruptionBudget'), undefined, "the chart's PDB stays off (gracegate's is in manifests.yaml)");
      });

      it("required anti-affinity up to every node: maxUnavailable is a percentage the chart renders as given; the chart's CPU target stands", () => {
        const { overlay, plan } = synth(REQUIRED, join(tmp, `req-${version}-${label}`));
        assert.equal(plan.rollout.maxUnavailable, '34%');
        const docs = objects(template(helm, version, ['-f', overlay]));
        docs.forEach(validateK8s);
        const dep = byKind(docs, 'Deployment')!;
        assert.deepEqual(dep.spec.strategy.rollingUpdate, { maxSurge: 1, maxUnavailable: '34%' });
        assert.ok(dep.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution);
        const hpa = byKind(docs, 'HorizontalPodAutoscaler')!;
        assert.equal(hpa.spec.minReplicas, 2);
        assert.equal(hpa.spec.maxReplicas, 3);
        assert.equal(hpa.spec.metrics[0].resource.target.averageUtilization, 80, "the chart's own target, not replaced");
        assert.equal(hpa.spec.behavior, undefined, "no behaviour in the spec: the HPA keeps Kubernetes' defaults");
        assert.equal(dep.spec.replicas, undefined);
      });
    });
  }

  describe(`istio/gateway ${version}: post-render and Kustomize on the plain render (HPA on, the chart's defaults)`, () => {
    const plain = template(TOOLS.helm3, version, []);
    const { overlay } = synth(EXAMPLE, join(tmp, `agree-${version}`), ['--kustomize']);
    const viaOverlay = objects(template(TOOLS.helm3, version, ['-f', overlay]));
    const postRendered = objects(postRender(EXAMPLE, plain));

    it('post-render gives the Deployment and the HPA the overlay gives', () => {
      assert.equal(byKind(objects(plain), 'HorizontalPodAutoscaler')!.spec.minReplicas, 1, "the chart's default range before");
      assert.deepEqual(byKind(postRendered, 'Deployment'), byKind(viaOverlay, 'Deployment'));
      assert.deepEqual(byKind(postRendered, 'HorizontalPodAutoscaler'), byKind(viaOverlay, 'HorizontalPodAutoscaler'));
      assert.equal(byKind(postRendered, 'Deployment')!.spec.replicas, undefined);
    });

    it('kubectl kustomize with the component gives the same Deployment and HPA as post-render', () => {
      // Kustomize wants the component inside the kustomization's root: the app sits beside it.
      const dir = join(tmp, `agree-${version}`);
      mkdirSync(join(dir, 'app'), { recursive: true });
      writeFileSync(join(dir, 'app/all.yaml'), plain);
      writeFileSync(join(dir, 'app/kustomization.yaml'), 'resources: [all.yaml]\ncomponents: [../kustomize]\n');
      const k = run(requireTool(TOOLS.kubectl), ['kustomize', join(dir, 'app')]);
      assert.equal(k.status, 0, k.stderr);
      const out = objects(k.stdout);
      for (const kind of ['Deployment', 'HorizontalPodAutoscaler']) {
        assert.deepEqual(withoutEmpty(byKind(out, kind)), withoutEmpty(byKind(postRendered, kind)), kind);
      }
      assert.equal(byKind(out, 'Deployment')!.spec.replicas, undefined);
    });
  });
}

describe('an autoscaled spec against a render without an HPA', () => {
  const off = template(TOOLS.helm3, '1.27.9', ['--set', 'autoscaling.enabled=false']);

  it('post-render refuses, naming the fix', () => {
    const r = run(process.execPath, [CLI, 'post-render', '--spec', EXAMPLE], { input: off });
    assert.equal(r.status, 2);
    assert.match(
      r.stderr,
      /spec.autoscaling is set, but no HorizontalPodAutoscaler in the input scales Deployment\/istio-ingress\/igw-public: render the chart with its autoscaling on/,
    );
    assert.equal(r.stdout, '');
  });

  it('kubectl kustomize fails instead of leaving a Deployment without replicas or HPA', () => {
    const out = join(tmp, 'kz-off');
    synth(EXAMPLE, out, ['--kustomize']);
    mkdirSync(join(out, 'app'), { recursive: true });
    writeFileSync(join(out, 'app/all.yaml'), off);
    writeFileSync(join(out, 'app/kustomization.yaml'), 'resources: [all.yaml]\ncomponents: [../kustomize]\n');
    const k = run(TOOLS.kubectl, ['kustomize', join(out, 'app')]);
    assert.notEqual(k.status, 0);
    assert.match(k.stderr, /no resource matches strategic merge patch \\?"HorizontalPodAutoscaler.v2.autoscaling\/igw-public/);
  });
});

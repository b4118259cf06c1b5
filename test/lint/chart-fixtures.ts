import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { manifestsYaml } from '../../src/delivery/manifests';
import { valuesOverlayYaml } from '../../src/delivery/helm-values/overlay';
import { planGateway } from '../../src/plan/plan-gateway';
import { podChanges } from '../../src/pod/pod-changes';
import { resolveGatewaySpec } from '../../src/schema/parse-spec';
import { CLI, GATEWAY_CHART, HELMS, example, helm } from '../emit/helpers';
import { CHART_VERSIONS, gatewayChart } from '../support/fixtures';

/**
 * The real charts lint is held against: istio/gateway 1.26.8, 1.27.9 and 1.30.3 and the in-house
 * chart with their default values, and the same charts with gracegate's output for every example
 * spec (values overlay, or post-render for 1.26, plus synth's manifests.yaml with its NetworkPolicy,
 * as a user applies them). Rendered by the real helm 3.
 */
export type ChartFixture = {
  name: string;
  /** The rendered stream, written to `file` for the CLI and kube-score. */
  file: string;
  text: string;
  /** The spec the overlay came from (lint it with --spec too); absent for the defaults. */
  spec?: string;
};

export const ISTIO_VERSIONS = CHART_VERSIONS;
export const EXAMPLES = ['citrix.yaml', 'envoy.yaml', 'f5.yaml', 'haproxy-soft-drain.yaml', 'haproxy.yaml', 'nlb.yaml'] as const;

const helm3 = HELMS['helm 3.17'];

function postRender(rendered: string, spec: string): string {
  const r = spawnSync(process.execPath, [CLI, 'post-render', '--spec', spec], { input: rendered, encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`post-render --spec ${spec}: ${r.stderr}`);
  return r.stdout;
}

export function renderChartFixtures(dir: string): ChartFixture[] {
  mkdirSync(dir, { recursive: true });
  const out: ChartFixture[] = [];
  const add = (name: string, text: string, spec?: string) => {
    const file = join(dir, `${name.replace(/[^a-z0-9.]+/gi, '-')}.yaml`);
    writeFileSync(file, text);
    out.push({ name, file, text, ...(spec ? { spec } : {}) });
  };

  for (const v of ISTIO_VERSIONS) add(`istio/gateway ${v} defaults`, helm(helm3, ['template', 'igw', gatewayChart(v), '--namespace', 'istio-ingress']));
  add('in-house chart defaults', helm(helm3, ['template', 'igw', GATEWAY_CHART, '--namespace', 'istio-ingress']));

  for (const file of EXAMPLES) {
    const ex = example(file);
    const { name, namespace } = ex.changes.gateway;
    const beside = manifestsYaml(ex.changes);
    const chart = ex.resolved.spec.spec.chart;
    // The example's own chart, and the other kind, with the spec's chart set to match.
    const targets: Array<{ label: string; path: string; kind: 'istio-gateway' | 'additional-containers'; version: string }> = [
      chart.kind === 'istio-gateway'
        ? { label: `istio/gateway ${chart.version}`, path: gatewayChart(chart.version), kind: 'istio-gateway', version: chart.version }
        : { label: 'in-house chart', path: GATEWAY_CHART, kind: 'additional-containers', version: '0.1.0' },
    ];
    if (chart.kind === 'istio-gateway') targets.push({ label: 'in-house chart', path: GATEWAY_CHART, kind: 'additional-containers', version: '0.1.0' });
    else targets.push({ label: 'istio/gateway 1.30.3', path: gatewayChart('1.30.3'), kind: 'istio-gateway', version: '1.30.3' });
    for (const t of targets) {
      const specFile = join(dir, `${file.replace(/\.yaml$/, '')}-${t.kind}.spec.yaml`);
      const raw = { ...(ex.resolved.spec as unknown as Record<string, unknown>) };
      const specInput = JSON.parse(JSON.stringify({ ...raw, spec: { ...(raw.spec as object), chart: { kind: t.kind, version: t.version } } }));
      writeFileSync(specFile, JSON.stringify(specInput, null, 2));
      const changes = podChanges(planGateway(resolveGatewaySpec(specInput)));
      const overlay = join(dir, `${file.replace(/\.yaml$/, '')}-${t.kind}.values.yaml`);
      writeFileSync(overlay, valuesOverlayYaml(changes, { kind: t.kind, version: t.version }));
      const rendered = helm(helm3, ['template', name, t.path, '--namespace', namespace, '-f', overlay]);
      add(`${t.label} + gracegate (${file})`, `${rendered}---\n${beside}`, specFile);
    }
  }
  // istio/gateway 1.26 cannot take the hold through values: post-render, as the README says.
  const ex = example('haproxy.yaml');
  const specFile = join(dir, 'haproxy-1.26.spec.yaml');
  const specInput = JSON.parse(JSON.stringify({ ...(ex.resolved.spec as unknown as Record<string, unknown>) }));
  specInput.spec.chart = { kind: 'istio-gateway', version: '1.26.8' };
  writeFileSync(specFile, JSON.stringify(specInput, null, 2));
  const rendered = helm(helm3, [
    'template',
    ex.changes.gateway.name,
    gatewayChart('1.26.8'),
    '--namespace',
    ex.changes.gateway.namespace,
    '--set',
    'autoscaling.enabled=false',
  ]);
  add('istio/gateway 1.26.8 + gracegate post-render (haproxy.yaml)', postRender(rendered, specFile), specFile);
  return out;
}

/**
 * What synth writes for Prometheus and Grafana, per `spec.observability.prometheus`, and the
 * dashboard checked against Grafana's own dashboard schema: the written JSON is compiled as a
 * value of `Dashboard` from @grafana/schema (types Grafana generates from its schema), so an
 * unknown key, a missing required field or a wrong type fails the TypeScript compiler.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { grafanaDashboardJson } from '../../../src/emit/monitoring/grafana-dashboard';
import { monitoringFiles } from '../../../src/emit/monitoring';
import { planGateway } from '../../../src/plan/plan-gateway';
import { podChanges } from '../../../src/pod/pod-changes';
import { REPO_ROOT } from '../../support/repo';
import { resolved } from '../../support/spec-builder';

const TSC = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** Compiles each JSON text as a @grafana/schema Dashboard; returns tsc's exit status and output. */
function checkDashboard(...json: string[]): { status: number | null; output: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gracegate-dashboard-'));
  const values = json.map((text, i) => `export const dashboard${i}: Dashboard = ${text.trim()};\n`).join('');
  fs.writeFileSync(path.join(dir, 'dashboard.ts'), `import type { Dashboard } from '@grafana/schema';\n${values}`);
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      // skipLibCheck: the dashboard is checked against the types, not the types themselves (3x faster).
      compilerOptions: {
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        lib: ['es2020'],
        module: 'commonjs',
        moduleResolution: 'node',
        baseUrl: REPO_ROOT,
        paths: { '@grafana/schema': ['node_modules/@grafana/schema'] },
        types: [],
      },
      files: ['dashboard.ts'],
    }),
  );
  const r = spawnSync(process.execPath, [TSC, '-p', dir], { encoding: 'utf8', timeout: 60_000 });
  fs.rmSync(dir, { recursive: true, force: true });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('files per spec.observability.prometheus', () => {
  test('operator (default): PodMonitor, PrometheusRule, dashboard; the pod declares the metrics port', () => {
    const plan = planGateway(resolved());
    const files = monitoringFiles(plan);
    assert.deepEqual(Object.keys(files).sort(), ['grafana-dashboard.json', 'pod-monitor.yaml', 'prometheus-rules.yaml']);
    const monitor = parse(files['pod-monitor.yaml']!) as {
      kind: string;
      metadata: { namespace: string };
      spec: { selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: { port: string }[] };
    };
    assert.equal(monitor.kind, 'PodMonitor');
    assert.equal(monitor.metadata.namespace, 'istio-ingress');
    const changes = podChanges(plan);
    assert.deepEqual(monitor.spec.selector.matchLabels, changes.selectorLabels);
    const ports = changes.hcContainer.ports!.map((p) => p.name);
    assert.ok(ports.includes(monitor.spec.podMetricsEndpoints[0]!.port), 'the PodMonitor scrapes a port the sidecar declares');
    assert.equal(changes.hcConfig.metricsPort, 18183);
    assert.equal(changes.hcConfig.finalScrapeWaitSeconds, 30, '2 x the 15 s scrape interval');
    assert.deepEqual(JSON.parse(changes.podAnnotations['proxy.istio.io/config']!).proxyStatsMatcher, {
      inclusionSuffixes: ['downstream_rq_active', 'downstream_cx_active', 'downstream_rq_5xx', 'downstream_cx_destroy_remote_active_rq'],
    });
    assert.equal((parse(files['prometheus-rules.yaml']!) as { kind: string }).kind, 'PrometheusRule');
  });

  test("a Gateway API gateway's pods are selected by istiod's label, not app/istio", () => {
    const plan = planGateway(resolved({ spec: { chart: { kind: 'gateway-api', version: '1.27.9' } } }));
    const monitor = parse(monitoringFiles(plan)['pod-monitor.yaml']!) as { spec: { selector: { matchLabels: Record<string, string> } } };
    assert.deepEqual(monitor.spec.selector.matchLabels, { 'gateway.networking.k8s.io/gateway-name': 'igw' });
    assert.deepEqual(monitor.spec.selector.matchLabels, podChanges(plan).selectorLabels);
  });

  test('scrape-config: a scrape job and a rule file; none: nothing, and no final-scrape wait', () => {
    const plan = planGateway(resolved({ spec: { observability: { prometheus: 'scrape-config', scrapeInterval: '30s' } } }));
    const files = monitoringFiles(plan);
    assert.deepEqual(Object.keys(files).sort(), ['grafana-dashboard.json', 'prometheus-rules.yaml', 'prometheus-scrape.yaml']);
    const [job] = parse(files['prometheus-scrape.yaml']!) as { job_name: string; scrape_interval: string }[];
    assert.equal(job!.job_name, 'istio-ingress/igw-gracegate');
    assert.equal(job!.scrape_interval, '30s');
    assert.ok(Array.isArray((parse(files['prometheus-rules.yaml']!) as { groups: unknown[] }).groups));
    assert.equal(plan.timings.finalScrapeWaitSeconds, 60);

    const none = planGateway(resolved({ spec: { observability: { prometheus: 'none' } } }));
    assert.deepEqual(monitoringFiles(none), {});
    assert.equal(none.timings.finalScrapeWaitSeconds, 0);
    assert.deepEqual(
      JSON.parse(podChanges(none).podAnnotations['proxy.istio.io/config']!).proxyStatsMatcher,
      { inclusionSuffixes: ['downstream_rq_active', 'downstream_cx_active'] },
      'only what the sidecar counts',
    );
  });

  test("the grace period covers the final-scrape wait when it is longer than Envoy's exit", () => {
    const base = planGateway(resolved({ spec: { observability: { prometheus: 'none' } } })).timings;
    const scraped = planGateway(resolved()).timings;
    assert.equal(scraped.terminationGracePeriodSeconds - base.terminationGracePeriodSeconds, 30 - 5, 'max(5 s Envoy exit, 30 s final scrape) instead of 5 s');
  });

  test('a metrics port that is also the health port is refused, naming the field', () => {
    assert.throws(
      () => resolved({ spec: { observability: { metricsPort: 18180 } } }),
      /observability\.metricsPort[\s\S]*also spec\.health\.port|also spec\.health\.port/,
    );
  });
});

test("the dashboard compiles as Grafana's Dashboard type; a broken one does not", () => {
  const json = grafanaDashboardJson(planGateway(resolved()));
  const good = checkDashboard(json);
  assert.equal(good.status, 0, good.output);
  const broken = (change: (d: Record<string, unknown> & { panels: Record<string, unknown>[] }) => void) => {
    const d = JSON.parse(json) as Record<string, unknown> & { panels: Record<string, unknown>[] };
    change(d);
    return JSON.stringify(d, null, 2);
  };
  const bad = checkDashboard(
    broken((d) => delete d['schemaVersion']),
    broken((d) => (d.panels[0]!['gridPos'] = { x: 0, y: 0, w: 'wide', h: 4 })),
    broken((d) => (d['refreshEvery'] = '30s')),
  );
  assert.notEqual(bad.status, 0);
  assert.match(bad.output, /dashboard0[\s\S]*schemaVersion|schemaVersion/);
  assert.match(bad.output, /Type 'string' is not assignable to type 'number'/);
  assert.match(bad.output, /refreshEvery/);
  assert.equal((bad.output.match(/error TS/g) ?? []).length, 3, bad.output);
});

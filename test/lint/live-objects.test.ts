import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse, stringify } from 'yaml';
import type { LintFinding } from '../../src/lint/rule';
import { REPO_ROOT } from '../support/repo';
import { lintText, specOptions } from './helpers';

/*
 * lint --spec on objects read back from the real API server (issue 36): the Deployment, Services,
 * PDB, Pods and hc ConfigMap of the overlay-1.31 delivery path (values overlay, helm 4, istio/gateway
 * 1.31) as `kubectl get -o yaml` returned them, less managedFields and status, captured by
 * test/proof/cluster/delivery-paths.test.ts (GRACEGATE_LINT_CAPTURE), with the spec that path was planned
 * from. The server's defaults and istiod's injection are in them; only the plan's fields count.
 */

const DIR = join(REPO_ROOT, 'test', 'lint', 'live');
const SPEC = join(DIR, 'overlay-1.31.spec.yaml');
const captured = parse(readFileSync(join(DIR, 'overlay-1.31.yaml'), 'utf8')) as { items: Array<Record<string, any>> };

const lint = (list: { items: unknown[] }) => lintText(stringify(list), 'live.yaml', specOptions(SPEC)).findings;
const show = (f: LintFinding) => `${f.rule} ${f.object} ${f.field}: ${f.message}`;
const mismatches = (list: { items: unknown[] }) => lint(list).filter((f) => f.rule === 'plan-mismatch');
const copy = () => structuredClone(captured);
const deployment = (l: typeof captured) => l.items.find((o) => o.kind === 'Deployment')!;
/** The gateway's Pods (the namespace also runs the test app's). */
const pods = (l: typeof captured) => l.items.filter((o) => o.kind === 'Pod' && o.spec.containers.some((c: { name: string }) => c.name === 'istio-proxy'));

test('the captured live objects, injected Pods included, against their spec: no finding', () => {
  assert.ok(pods(captured).length >= 2, 'the capture has the Pods');
  assert.ok(
    pods(captured).every((p) => p.metadata.annotations['sidecar.istio.io/status'] && p.spec.volumes.some((v: { name: string }) => v.name === 'istio-envoy')),
    'the Pods are as the injector admitted them',
  );
  assert.deepEqual(lint(captured).map(show), []);
});

test("without the marks of a live object (uid, resourceVersion, creationTimestamp) the same objects differ from the plan in the server's defaults", () => {
  const l = copy();
  for (const o of l.items) {
    delete o.metadata.uid;
    delete o.metadata.resourceVersion;
    delete o.metadata.creationTimestamp;
  }
  const found = mismatches(l);
  assert.ok(found.length > 0, 'a rendered manifest is compared whole');
  assert.ok(
    found.some((f) => /terminationMessagePath|imagePullPolicy|timeoutSeconds|scheme|progressDeadlineSeconds|revisionHistoryLimit/.test(f.message)),
    found.map(show).join('\n'),
  );
});

test('a hand edit of the grace period: named by path, with the live and the planned value', () => {
  const l = copy();
  const planned = deployment(l).spec.template.spec.terminationGracePeriodSeconds as number;
  deployment(l).spec.template.spec.terminationGracePeriodSeconds = 30;
  assert.deepEqual(
    mismatches(l).map((f) => `${f.object} ${f.field}: ${f.message.split(': ').slice(1).join(': ')}`),
    [
      `Deployment/${deployment(l).metadata.namespace}/${deployment(l).metadata.name} spec.template.spec.terminationGracePeriodSeconds: the cluster has 30, the plan ${planned}`,
    ],
  );
});

test('a chart upgrade that drops a field (minReadySeconds): named as absent', () => {
  const l = copy();
  const planned = deployment(l).spec.minReadySeconds as number;
  delete deployment(l).spec.minReadySeconds;
  const found = mismatches(l);
  assert.deepEqual(
    found.map((f) => f.field),
    ['spec.minReadySeconds'],
  );
  assert.match(found[0]!.message, new RegExp(`the cluster has absent, the plan ${planned}$`));
});

test("an injector setting that rewrites the sidecar's probes: named on the Pod, at the probe's path", () => {
  const l = copy();
  const pod = pods(l)[0]!;
  const i = pod.spec.containers.findIndex((c: { name: string }) => c.name === 'gracegate-hc');
  const hc = pod.spec.containers[i];
  hc.readinessProbe.httpGet = { path: '/app-health/gracegate-hc/readyz', port: 15020, scheme: 'HTTP' };
  hc.livenessProbe.httpGet = { path: '/app-health/gracegate-hc/livez', port: 15020, scheme: 'HTTP' };
  const found = mismatches(l).map((f) => `${f.object} ${f.field}: ${f.message.split(': ').slice(1).join(': ')}`);
  const at = `Pod/${pod.metadata.namespace}/${pod.metadata.name} spec.containers[${i}]`;
  assert.deepEqual(found.sort(), [
    `${at}.livenessProbe.httpGet.path: the cluster has "/app-health/gracegate-hc/livez", the plan "/live"`,
    `${at}.livenessProbe.httpGet.port: the cluster has 15020, the plan "hc-health"`,
    `${at}.readinessProbe.httpGet.path: the cluster has "/app-health/gracegate-hc/readyz", the plan "/health"`,
    `${at}.readinessProbe.httpGet.port: the cluster has 15020, the plan "hc-health"`,
  ]);
});

test("a chart upgrade that restates the gateway Service's ports without the health port: named on that Service", () => {
  const l = copy();
  const svc = l.items.find((o) => o.kind === 'Service' && o.spec.ports.some((p: { name: string }) => p.name === 'hc-health'))!;
  assert.equal(svc.metadata.name, deployment(l).metadata.name, "the health port is on the gateway's own Service");
  svc.spec.ports = svc.spec.ports.filter((p: { name: string }) => p.name !== 'hc-health');
  const found = mismatches(l);
  assert.deepEqual(
    found.map((f) => `${f.object} ${f.field}`),
    [`Service/${svc.metadata.namespace}/${svc.metadata.name} spec.ports`],
  );
  assert.match(found[0]!.message, /the health port hc-health: the cluster has absent, the plan \{"name":"hc-health"/);
});

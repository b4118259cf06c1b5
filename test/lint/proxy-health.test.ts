import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { load } from 'js-yaml';
import type { LintFinding } from '../../src/lint/rule';
import { EXPECTED, INPUTS } from './corpus';
import { lintText, optionsOf } from './helpers';

/*
 * Health endpoints the proxy serves itself (issue 36, point 3): a port of istio-proxy that an
 * external Service targets is the LB's health endpoint when it is not one of the gateway Service's
 * traffic ports, when it is named like a health port, or when --lb …,port= names it; the LB-side
 * rules then read it, and the LB's view says which case it was.
 */

const INPUT = join(INPUTS, 'proxy-health-listener.yaml');
const text = readFileSync(INPUT, 'utf8');
const key = (f: { rule: string; object: string; field: string }) => `${f.rule} ${f.object} ${f.field}`;
const lint = (t: string, flags: string[] = []) => lintText(t, 'proxy-health.yaml', optionsOf(flags)).findings;
const only = (found: LintFinding[], rule: string) => found.filter((f) => f.rule === rule);

test('the corpus input: an Envoy health_check listener on its own port of istio-proxy gives its expected findings', () => {
  const expected = load(readFileSync(join(EXPECTED, 'hand-written-proxy-health-listener.yaml'), 'utf8')) as {
    findings: Array<{ rule: string; object: string; field: string }>;
  };
  const found = lint(text);
  assert.deepEqual(found.map(key).sort(), expected.findings.map(key).sort());
  const readiness = only(found, 'readiness-on-lb-path')[0]!;
  assert.match(
    readiness.lbView!.statement,
    /^the LB probes 8082 \(GET \/lb-health: the envoy\.filters\.http\.health_check filter of EnvoyFilter\/edge\/edge-gw-lb-check spec\.configPatches\[0\] on port 8082\) through Service\/edge\/edge-gw-lb-check NodePort 30182; istio-proxy serves it itself \(Service\/edge\/edge-gw-lb-check targets port 8082 of istio-proxy, not one of the traffic ports 8080, 8443 that Service\/edge\/edge-gw carries\)$/,
  );
  assert.equal(only(found, 'health-service-not-local')[0]!.numbers!.externalTrafficPolicy!.source, 'Service/edge/edge-gw-lb-check spec.externalTrafficPolicy');
});

test("externalTrafficPolicy left to the default on the proxy's health Service is reported as Cluster, on spec.type", () => {
  const found = lint(text.replace('  externalTrafficPolicy: Cluster\n', ''));
  const f = only(found, 'health-service-not-local');
  assert.deepEqual(f.map(key), ['health-service-not-local Service/edge/edge-gw-lb-check spec.type']);
  assert.match(f[0]!.message, /externalTrafficPolicy Cluster \(the default\)/);
  const local = lint(text.replace('  externalTrafficPolicy: Cluster\n', '  externalTrafficPolicy: Local\n'));
  assert.deepEqual(only(local, 'health-service-not-local'), []);
  assert.equal(only(local, 'readiness-on-lb-path').length, 1, 'readiness is judged whatever the policy');
});

/** The same gateway with its health port carried by the gateway Service itself (one Service). */
function oneService(portName: string): string {
  return text
    .replace(/---\napiVersion: v1\nkind: Service\nmetadata: \{name: edge-gw-lb-check[\s\S]*?nodePort: 30182\}\n/, '')
    .replace(
      '    - {name: https, port: 443, targetPort: 8443}\n',
      `    - {name: https, port: 443, targetPort: 8443}\n    - {name: ${portName}, port: 8082, targetPort: 8082, nodePort: 30182}\n`,
    )
    .replace('type: LoadBalancer\n  externalTrafficPolicy: Local', 'type: LoadBalancer\n  externalTrafficPolicy: Cluster')
    .replaceAll('http-lb', portName === 'http-lb' ? 'http-lb' : portName);
}

test("a port named like a health port, in the gateway Service itself: taken as the proxy's health endpoint, the case named", () => {
  const found = lint(oneService('healthz'));
  const r = only(found, 'readiness-on-lb-path');
  assert.equal(r.length, 1, JSON.stringify(found.map(key)));
  assert.match(r[0]!.lbView!.statement, /istio-proxy serves it itself \(port 8082 of istio-proxy is named 'healthz', like a health port\)$/);
  assert.match(r[0]!.lbView!.statement, /through Service\/edge\/edge-gw \(LoadBalancer\) node port 30182/);
  assert.deepEqual(only(found, 'health-service-not-local').map(key), ['health-service-not-local Service/edge/edge-gw spec.externalTrafficPolicy']);
});

test('a neutral name in the gateway Service is a traffic port (near miss) until --lb …,port= names it', () => {
  const text1 = oneService('http-lb');
  const plain = lint(text1);
  for (const rule of ['readiness-on-lb-path', 'health-service-not-local']) assert.deepEqual(only(plain, rule), [], `${rule} without --lb`);
  const flagged = lint(text1, ['--lb', 'haproxy,inter=2s,fall=2,port=30182']);
  const r = only(flagged, 'readiness-on-lb-path');
  assert.equal(r.length, 1, JSON.stringify(flagged.map(key)));
  assert.match(r[0]!.lbView!.statement, /GET \/lb-health: the envoy\.filters\.http\.health_check filter of EnvoyFilter\/edge\/edge-gw-lb-check/);
  assert.match(r[0]!.lbView!.statement, /istio-proxy serves it itself \(--lb haproxy,inter=2s,fall=2,port=30182 names port 8082, a port of istio-proxy\)$/);
  assert.equal(only(flagged, 'liveness-on-drain-aware-path').length, 1);
});

test("without the EnvoyFilter the LB's path is unknown: the Service's policy is still judged, readiness is not guessed", () => {
  const bare = text.slice(0, text.indexOf('---\napiVersion: networking.istio.io'));
  const found = lint(bare);
  assert.deepEqual(only(found, 'readiness-on-lb-path'), []);
  const svc = only(found, 'health-service-not-local');
  assert.equal(svc.length, 1);
  assert.match(
    svc[0]!.lbView!.statement,
    /path unknown: no EnvoyFilter of the input puts envoy\.filters\.http\.health_check on port 8082: name the LB's path with --lb MODEL,path=…/,
  );
  const named = lint(bare, ['--lb', 'haproxy,inter=2s,fall=2,path=/lb-health']);
  assert.equal(only(named, 'readiness-on-lb-path').length, 1, '--lb …,path= names the path');
});

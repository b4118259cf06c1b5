/**
 * Where the LB's probe enters the pod (src/plan/start-half.ts healthProbeOf, issue 50): a port of
 * the gateway's own Service where the LB stops needing the sidecar before istio-proxy's readiness
 * can give up after the drain, else a health Service of its own with the start hold; what
 * spec.health.service says overrides it, and the pod changes follow.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planGateway } from '../../src/plan/plan-gateway';
import { PROXY_READINESS_GIVE_UP_SECONDS } from '../../src/plan/start-half';
import { podChanges } from '../../src/pod';
import { resolveGatewaySpec } from '../../src/schema/parse-spec';
import { specInput } from '../support/spec-builder';

const HEALTH = { exposure: 'nodePort', port: 18180, nodePort: 30180 };
const plan = (p99: number, health: Record<string, unknown> = HEALTH, loadBalancer?: Record<string, unknown>) =>
  planGateway(resolveGatewaySpec(specInput({ spec: { traffic: { longRequestP99Seconds: p99 }, health, ...(loadBalancer ? { loadBalancer } : {}) } })));

test("a sequence that ends before istio-proxy's readiness can give up: the health port on the gateway's Service, no hold", () => {
  const p = plan(3);
  assert.equal(p.sequence, 'drain-first');
  assert.ok(p.timings.drainTimeoutSeconds + p.timings.lbBufferSeconds < PROXY_READINESS_GIVE_UP_SECONDS);
  assert.equal(p.healthProbe.via, 'gateway-service');
  assert.match(p.healthProbe.reason, /one slice and one sync with its traffic/);
  assert.equal(p.timings.startHoldSeconds, 0);
  const c = podChanges(p);
  assert.equal(c.healthService, null, 'no health Service of its own');
  assert.deepEqual(c.gatewayServiceHealthPort, { name: 'hc-health', protocol: 'TCP', port: 18180, targetPort: 18180, nodePort: 30180 });
  assert.equal(c.hcConfig.startHold?.seconds ?? 0, 0);
});

test('a drain-first sequence the LB must hear past that: a health Service of its own and the start hold', () => {
  const p = plan(100);
  assert.ok(p.timings.drainTimeoutSeconds + p.timings.lbBufferSeconds >= PROXY_READINESS_GIVE_UP_SECONDS);
  assert.equal(p.healthProbe.via, 'health-service');
  assert.match(p.healthProbe.reason, /would stop reaching the pod mid-sequence/);
  assert.ok(p.timings.startHoldSeconds > 0);
  const c = podChanges(p);
  assert.equal(c.gatewayServiceHealthPort, null);
  assert.equal(c.healthService?.type, 'NodePort');
});

test('health-first stops needing the sidecar at the drain: the gateway Service whatever the drain', () => {
  const p = plan(100, HEALTH, { model: 'haproxy', inter: '2s', fall: 2 });
  assert.equal(p.sequence, 'health-first');
  assert.equal(p.healthProbe.via, 'gateway-service');
});

test('spec.health.service overrides the choice; gateway past the limit is a warning with both fixes', () => {
  const own = plan(3, { ...HEALTH, service: 'own' });
  assert.equal(own.healthProbe.via, 'health-service');
  assert.ok(own.timings.startHoldSeconds > 0);
  assert.ok(!own.findings.some((f) => f.id === 'health-port-on-gateway-service-outlasted'));
  const forced = plan(100, { ...HEALTH, service: 'gateway' });
  assert.equal(forced.healthProbe.via, 'gateway-service');
  const f = forced.findings.find((x) => x.id === 'health-port-on-gateway-service-outlasted');
  assert.equal(f?.severity, 'warning');
  assert.match(f!.message, new RegExp(`can give up ${PROXY_READINESS_GIVE_UP_SECONDS}s later`));
  assert.deepEqual(
    f!.fixes?.map((x) => x.description),
    ['the plan chooses', 'a health Service of its own'],
  );
});

test('spec.health.service is for exposure nodePort only; other exposures keep their own way', () => {
  assert.throws(() => plan(3, { exposure: 'hostPort', port: 18180, service: 'gateway' }), /service is only used with exposure nodePort/);
  assert.equal(plan(3, { exposure: 'hostPort', port: 18180 }).healthProbe.via, 'host-port');
});

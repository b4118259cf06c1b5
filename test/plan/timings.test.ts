import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planGateway } from '../../src/plan/plan-gateway';
import { resolved } from '../support/spec-builder';

test("the seed's worked numbers: p99 100 s, HAProxy inter 2 s fall 2", () => {
  const plan = planGateway(resolved());
  assert.equal(plan.timings.drainTimeoutSeconds, 120, 'ceil(1.2 x 100)');
  assert.equal(plan.timings.lbDetectSeconds, 4, '2 + (2-1) x 2');
  assert.equal(plan.timings.lbBufferSeconds, 10, '4 + 6');
  assert.equal(plan.timings.sequenceSeconds, 130);
  assert.equal(plan.timings.terminationDrainDurationSeconds, 5, "Istio's default: the proxy is held by preStop");
  assert.equal(plan.timings.finalScrapeWaitSeconds, 30, '2 x the 15 s scrape interval');
  assert.equal(plan.timings.terminationGracePeriodSeconds, 130 + Math.max(5, 30) + 30, 'after the sequence, the longer of Envoy\'s exit and the final scrape');
});

test("the grace period never falls below the seed's formula max(drain + buffer, tdd) + 30", () => {
  // The seed's example keeps Envoy alive with terminationDrainDuration 150 s: its formula gives 180.
  const seed = planGateway(resolved({ spec: { envoy: { terminationDrainDurationSeconds: 150 } } }));
  const seedFormula = Math.max(seed.timings.drainTimeoutSeconds + seed.timings.lbBufferSeconds, 150) + 30;
  assert.equal(seedFormula, 180);
  assert.ok(seed.timings.terminationGracePeriodSeconds >= seedFormula);
  assert.equal(seed.timings.terminationGracePeriodSeconds, 130 + 150 + 30, 'Envoy gets SIGTERM only after the held sequence');

  // Even with the safety margin cut to 0, the seed floor holds.
  const thin = planGateway(resolved({ spec: { drain: { safetyMargin: 0 } } }));
  assert.equal(thin.timings.terminationGracePeriodSeconds, Math.max(120 + 10, 5) + 30);
});

test('every timing explains itself: formula, inputs and their sources', () => {
  const plan = planGateway(resolved({ spec: { traffic: { longRequestP99Seconds: '90s' }, drain: { lbMargin: 4 } } }));
  for (const [name, d] of Object.entries(plan.derivations)) {
    assert.equal(d.value, plan.timings[name as keyof typeof plan.timings], name);
    assert.ok(d.formula.length > 0, `${name} has a formula`);
    assert.ok(Object.keys(d.inputs).length > 0, `${name} has inputs`);
    for (const [input, i] of Object.entries(d.inputs)) assert.ok(i.source.length > 0, `${name}.${input} has a source`);
  }
  assert.equal(plan.timings.drainTimeoutSeconds, 108);
  assert.equal(plan.derivations.drainTimeoutSeconds.inputs.longRequestP99Seconds!.source, 'spec.traffic.longRequestP99Seconds');
  assert.equal(plan.derivations.lbBufferSeconds.inputs.lbMargin!.source, 'spec.drain.lbMargin');
  assert.equal(plan.timings.lbBufferSeconds, 8);
});

test('a short p99 cannot push the drain timeout below two polls; idle keep-alive connections set no floor', () => {
  const short = planGateway(resolved({ spec: { traffic: { longRequestP99Seconds: 2 } } }));
  assert.equal(short.timings.drainTimeoutSeconds, 3, 'max(ceil(2.4), ceil(2 x 1))');
  assert.equal(short.derivations.drainTimeoutSeconds.formula, 'max(ceil(1.2 x longRequestP99Seconds), ceil(2 x pollInterval))');
  assert.deepEqual(Object.keys(short.derivations.drainTimeoutSeconds.inputs).sort(), ['longRequestP99Seconds', 'pollInterval']);
  const tiny = planGateway(resolved({ spec: { traffic: { longRequestP99Seconds: '100ms' }, drain: { pollInterval: '2s' } } }));
  assert.equal(tiny.timings.drainTimeoutSeconds, 4, 'max(ceil(0.12), ceil(2 x 2))');
  const hcm = planGateway(resolved({ spec: { traffic: { longRequestP99Seconds: 2 }, envoy: { hcmDrainTimeoutSeconds: 30 } } }));
  assert.equal(hcm.timings.drainTimeoutSeconds, 3, "Envoy's drain_timeout no longer matters: idle connections are not waited for");
});

test('a drain timeout override is used as given, and a value below p99 is a finding', () => {
  const plan = planGateway(resolved({ spec: { drain: { timeout: '60s' } } }));
  assert.equal(plan.timings.drainTimeoutSeconds, 60);
  const f = plan.findings.find((x) => x.id === 'drain-timeout-below-p99');
  assert.ok(f);
  assert.equal(f.severity, 'warning');
  assert.match(f.remediation, /at least 120s/);
});

test('a p99 that cannot fit under a sane grace period is a finding', () => {
  const plan = planGateway(resolved({ spec: { traffic: { longRequestP99Seconds: '10m' } } }));
  assert.equal(plan.timings.drainTimeoutSeconds, 720);
  assert.ok(plan.findings.some((f) => f.id === 'grace-period-too-long'));
  assert.ok(!planGateway(resolved()).findings.some((f) => f.id === 'grace-period-too-long'));
});

test('sub-second LB timings stay exact (time-compressed end-to-end specs)', () => {
  const plan = planGateway(resolved({ spec: { loadBalancer: { model: 'haproxy', inter: '100ms', fall: 3 }, drain: { lbMargin: '300ms' } } }));
  assert.equal(plan.timings.lbDetectSeconds, 0.3);
  assert.equal(plan.timings.lbBufferSeconds, 0.6);
});

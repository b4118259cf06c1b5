import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planGateway } from '../../src/plan/plan-gateway';
import { resolved } from '../support/spec-builder';

function lbPlan(loadBalancer: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return planGateway(resolved({ spec: { loadBalancer, ...extra } }));
}

test('haproxy: inter + (fall-1) x fastinter, defaults from HAProxy', () => {
  const plan = lbPlan({ model: 'haproxy' });
  assert.equal(plan.timings.lbDetectSeconds, 2 + 2 * 2, 'inter 2s, fall 3, fastinter = inter');
  assert.equal(plan.loadBalancer.cutsSessionsOnDown, false);
  assert.equal(plan.loadBalancer.refused.value, 'failed');
  assert.match(plan.derivations.lbDetectSeconds.inputs.inter!.source, /^default: HAProxy inter 2000 ms/);
  assert.match(plan.derivations.lbDetectSeconds.inputs.fastinter!.source, /fastinter = inter/);

  const fast = lbPlan({ model: 'haproxy', inter: '1s', fastinter: '250ms', fall: 3 });
  assert.equal(fast.timings.lbDetectSeconds, 1.5);
  assert.equal(fast.derivations.lbDetectSeconds.inputs.fastinter!.source, 'spec.loadBalancer.fastinter');
});

test('haproxy: redispatch needs retries above 0', () => {
  assert.equal(lbPlan({ model: 'haproxy', redispatch: true }).loadBalancer.refused.value, 'resent');
  assert.equal(lbPlan({ model: 'haproxy', redispatch: true, retries: 0 }).loadBalancer.refused.value, 'failed');
});

test('citrix: interval x retries, downStateFlush ENABLED by default, TROFS as graceful signal', () => {
  const plan = lbPlan({ model: 'citrix' });
  assert.equal(plan.timings.lbDetectSeconds, 15);
  assert.equal(plan.timings.lbRecoverSeconds, 30, 'successRetries 1: recovery is bounded by downTime alone (probes of a DOWN service run every downTime)');
  assert.equal(plan.loadBalancer.cutsSessionsOnDown, true);
  assert.equal(plan.loadBalancer.refused.value, 'failed', 'NetScaler forwards the reset to the client without an AppQoE retryOnReset action');
  assert.equal(lbPlan({ model: 'citrix', retryOnReset: true }).loadBalancer.refused.value, 'resent');
  assert.equal(plan.loadBalancer.gracefulSignal, undefined);

  const trofs = lbPlan({ model: 'citrix', interval: 3, retries: 2, trofsCode: 299 });
  assert.equal(trofs.timings.lbDetectSeconds, 6);
  assert.deepEqual(trofs.loadBalancer.gracefulSignal?.status, 299);

  const byString = lbPlan({ model: 'citrix', trofsString: 'DRAINING' });
  assert.deepEqual([byString.loadBalancer.gracefulSignal?.status, byString.loadBalancer.gracefulSignal?.body], [200, 'DRAINING']);
});

test('f5: time-based timeout, service-down-action decides the flush, recv-disable as signal', () => {
  const plan = lbPlan({ model: 'f5' });
  assert.equal(plan.timings.lbDetectSeconds, 16);
  assert.equal(plan.loadBalancer.cutsSessionsOnDown, false);
  for (const action of ['reset', 'drop', 'reselect']) {
    assert.equal(lbPlan({ model: 'f5', serviceDownAction: action }).loadBalancer.cutsSessionsOnDown, true, action);
  }
  const soft = lbPlan({ model: 'f5', recvDisable: 'DRAINING' });
  assert.deepEqual([soft.loadBalancer.gracefulSignal?.status, soft.loadBalancer.gracefulSignal?.body], [200, 'DRAINING']);
});

test('nlb: interval x threshold with the controller defaults for instance + Local, plus propagation in the buffer', () => {
  const instance = lbPlan({ model: 'nlb' });
  assert.equal(instance.timings.lbDetectSeconds, 20, 'instance + Local: threshold 2');
  assert.equal(instance.loadBalancer.probeReachesSidecar, false);
  const ip = lbPlan({ model: 'nlb', targetType: 'ip' });
  assert.equal(ip.timings.lbDetectSeconds, 30, 'ip: threshold 3');
  assert.equal(ip.timings.lbBufferSeconds, Math.max(30 + 40, 120) + 6, 'ip: the deregistration, started at deletion, stops new connections only ~120 s later');
  assert.equal(ip.derivations.lbBufferSeconds.formula, 'max(lbDetectSeconds + propagationDelay, deregistrationLag) + lbMargin');
  assert.match(ip.derivations.lbBufferSeconds.inputs.deregistrationLag!.source, /aws-load-balancer-controller#2366/);
  assert.equal(lbPlan({ model: 'nlb', targetType: 'ip', deregistrationLag: '10s' }).timings.lbBufferSeconds, 30 + 40 + 6, 'the later of the two ways out');
  assert.equal(
    instance.derivations.lbBufferSeconds.formula,
    'lbDetectSeconds + propagationDelay + lbMargin',
    'instance targets are nodes: no deregistration per pod',
  );
  assert.equal(ip.loadBalancer.cutsSessionsOnDown, true, 'AWS default: unhealthy connection termination on');
  assert.equal(ip.loadBalancer.refused.value, 'failed');
});

test('envoy: one interval plus jitter; keeps connections unless told to close them', () => {
  const plan = lbPlan({ model: 'envoy', activeHealthCheck: { interval: '3s', intervalJitter: '500ms' } }, { health: { exposure: 'clusterIP' } });
  assert.equal(plan.timings.lbDetectSeconds, 3.5);
  assert.equal(plan.loadBalancer.cutsSessionsOnDown, false);
  const closing = lbPlan(
    { model: 'envoy', activeHealthCheck: { interval: 1 }, closeConnectionsOnHostHealthFailure: true, upstreamProtocol: 'tcp' },
    { health: { exposure: 'clusterIP' } },
  );
  assert.equal(closing.loadBalancer.cutsSessionsOnDown, true);
  // Envoy closes only tcp_proxy connections on a health failure: over HTTP the flag does nothing.
  const http = lbPlan({ model: 'envoy', activeHealthCheck: { interval: 1 }, closeConnectionsOnHostHealthFailure: true }, { health: { exposure: 'clusterIP' } });
  assert.equal(http.loadBalancer.cutsSessionsOnDown, false);
  assert.equal(http.sequence, 'health-first');
  assert.ok(http.findings.some((f) => f.id === 'envoy-close-connections-not-http'));
  assert.ok(!closing.findings.some((f) => f.id === 'envoy-close-connections-not-http'));
});

test('each LB model knows how long it takes a new pod back in, and minReadySeconds covers it', () => {
  const cases: Array<[Record<string, unknown>, number, string]> = [
    [{ model: 'haproxy', inter: '2s', fall: 2, rise: 3, fastinter: '500ms' }, 3, 'downinter + (rise - 1) x fastinter'],
    [{ model: 'citrix', interval: 5, successRetries: 2 }, 60, 'downTime x successRetries'],
    [{ model: 'f5', interval: 5 }, 15, 'interval + slowRampTime'],
    [{ model: 'f5', interval: 5, slowRampTime: 0 }, 5, 'interval + slowRampTime'],
    [{ model: 'nlb', targetType: 'ip', healthCheckInterval: 10, healthyThreshold: 3 }, 30, 'healthCheckInterval x healthyThreshold'],
    [{ model: 'envoy', activeHealthCheck: { interval: 2, healthyThreshold: 2 } }, 4, '(interval + intervalJitter) x healthyThreshold'],
  ];
  for (const [lb, recover, formula] of cases) {
    const plan = lbPlan(lb, { health: { exposure: lb.model === 'nlb' || lb.model === 'envoy' ? 'clusterIP' : 'nodePort' } });
    assert.equal(plan.timings.lbRecoverSeconds, recover, String(lb.model));
    assert.equal(plan.derivations.lbRecoverSeconds.formula, formula);
    // The start hold where the probe has a path of its own (a health Service of its own), none where
    // it takes the traffic's rules (a port of the gateway's own Service) or the LB reaches the pod's
    // IP (clusterIP, NLB ip targets).
    // (Every order here ends within 45 s of the drain: test/plan/health-probe.test.ts has the other side.)
    const via = lb.model === 'nlb' || lb.model === 'envoy' ? 'lb' : 'gateway-service';
    assert.equal(plan.healthProbe.via, via, `${lb.model}: where the probe enters (${plan.healthProbe.reason})`);
    assert.equal(plan.timings.startHoldSeconds, 0, `${lb.model}: no start hold`);
    // Through the traffic's rules the probe passes only once they lead to the pod (minSyncPeriod 1 s +
    // propagation 1 s); to the pod's IP at once. Then the rise, lbMargin 6 s, and the Ready time's second.
    const passes = via === 'gateway-service' ? 2 : 0;
    assert.equal(plan.timings.minReadySeconds, Math.ceil(passes + recover + 6) + 1, `${lb.model}: ${passes} + recover + lbMargin, + 1`);
  }
});

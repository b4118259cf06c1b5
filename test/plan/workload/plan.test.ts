import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Finding } from '../../../src/model/finding';
import { planWorkload, type WorkloadPlan } from '../../../src/plan/workload/plan-workload';
import { WORKLOAD_RULES } from '../../../src/plan/workload/findings';
import { TimingOutOfRangeError } from '../../../src/plan/timing-bounds';
import { resolvedWorkload, specFile, workloadInput } from '../../support/workload-spec-builder';
import { runCli } from '../../support/run-cli';

function plan(spec: Record<string, unknown> = {}): WorkloadPlan {
  return planWorkload(resolvedWorkload(spec));
}

const ids = (findings: readonly Finding[]) => findings.map((f) => f.id).sort();

test("the experiment's app: preStop 5 s from kube-proxy's 4 s, shutdown timeout = the longest request, grace = their sum + 5 s", () => {
  const p = plan();
  assert.deepEqual(p.timings, {
    propagationDelaySeconds: 4,
    longestRequestSeconds: 40,
    preStopSeconds: 5,
    shutdownTimeoutSeconds: 40,
    terminationGracePeriodSeconds: 50,
    podTerminationSeconds: 45,
  });
  // The experiment's own rules hold: grace >= preStop + longest request + margin; timeout ~ grace - preStop.
  assert.ok(p.timings.terminationGracePeriodSeconds >= p.timings.preStopSeconds + p.timings.longestRequestSeconds + 1);
  assert.equal(p.timings.shutdownTimeoutSeconds, p.timings.terminationGracePeriodSeconds - p.timings.preStopSeconds - 5);
  assert.deepEqual(p.preStop, { action: 'sleep', seconds: 5, reason: p.preStop.reason });
  assert.deepEqual(p.shutdownTimeout, { via: 'env', name: 'SHUTDOWN_TIMEOUT_SEC', value: '40' });
  assert.deepEqual(
    { maxSurge: p.rollout.maxSurge, maxUnavailable: p.rollout.maxUnavailable, pdb: p.rollout.pdbMaxUnavailable, anti: p.rollout.antiAffinity },
    { maxSurge: 1, maxUnavailable: 0, pdb: 1, anti: 'none' },
  );
  // Every number explains itself: a formula, and each input's source.
  for (const [name, d] of Object.entries(p.derivations)) {
    assert.ok(d.formula.length > 0, name);
    for (const [input, i] of Object.entries(d.inputs)) assert.match(i.source, /^(spec\.|default|plan:)/, `${name}.${input}: ${i.source}`);
  }
  assert.equal(p.derivations.propagationDelaySeconds.inputs.kubeProxyDelay!.source.startsWith('default: '), true);
});

test('without maxRequestSeconds the longest request is ceil(1.2 x p99), as for a gateway drain', () => {
  const p = plan({ traffic: { longRequestP99Seconds: 0.5 } });
  assert.equal(p.timings.longestRequestSeconds, 1);
  assert.equal(p.derivations.longestRequestSeconds.formula, 'ceil(1.2 x longRequestP99Seconds)');
  assert.equal(p.timings.preStopSeconds, 5);
  assert.equal(p.timings.shutdownTimeoutSeconds, 1);
  assert.equal(p.timings.terminationGracePeriodSeconds, 11);
});

test('an app that dies at SIGTERM gets a preStop that outlasts the longest request too, and a warning that says what graceful shutdown would save', () => {
  const p = plan({ app: { gracefulShutdown: false } });
  assert.equal(p.timings.preStopSeconds, 45);
  assert.equal(p.timings.shutdownTimeoutSeconds, 0);
  assert.equal(p.timings.terminationGracePeriodSeconds, 50);
  assert.deepEqual(p.shutdownTimeout, { via: 'none' });
  const f = p.findings.find((x) => x.id === 'graceful-shutdown-absent')!;
  assert.equal(f.severity, 'warning');
  assert.match(f.message, /45s instead of 5s/);
  // Short requests: nothing worth a warning (the wait grows by under a second).
  const short = plan({ app: { gracefulShutdown: false }, traffic: { longRequestP99Seconds: 0.5 } });
  assert.equal(short.timings.preStopSeconds, 6);
  assert.ok(!ids(short.findings).includes('graceful-shutdown-absent'));
});

test('the preStop form follows the cluster and the image: sleep from 1.30, exec sleep before, an error for exec in a distroless image', () => {
  assert.equal(plan({ kubernetesVersion: '1.34' }).preStop.action, 'sleep');
  assert.ok(!ids(plan({ kubernetesVersion: '1.34' }).findings).includes('native-sleep-beta'));
  assert.ok(ids(plan({ kubernetesVersion: '1.30' }).findings).includes('native-sleep-beta'));
  const old = plan({ kubernetesVersion: 'v1.29.4', image: { distroless: false } });
  assert.equal(old.preStop.action, 'exec');
  assert.deepEqual(ids(old.findings), []);
  assert.ok(ids(plan({ kubernetesVersion: '1.28' }).findings).includes('prestop-exec-needs-sleep'));
  const distroless = plan({ kubernetesVersion: '1.28', image: { distroless: true } });
  assert.equal(distroless.findings[0]!.id, 'prestop-exec-distroless');
  assert.equal(distroless.findings[0]!.severity, 'error');
  // The fix it names (a 1.30+ cluster) removes it and brings nothing back.
  assert.deepEqual(ids(plan({ kubernetesVersion: '1.30', image: { distroless: true } }).findings), ['native-sleep-beta']);
  assert.equal(plan({ termination: { preStopSeconds: 0 } }).preStop.action, 'none');
});

test('traffic paths: kube-proxy 4 s, an ingress assumed as fast (and said so), an external LB with Local waits for its health check', () => {
  const ingress = plan({ trafficPath: { via: 'ingress', controller: 'ingress-nginx' } });
  assert.equal(ingress.timings.propagationDelaySeconds, 4);
  assert.ok(ids(ingress.findings).includes('propagation-delay-assumed'));
  assert.ok(!ids(plan({ trafficPath: { via: 'ingress', propagationDelay: '2s' } }).findings).includes('propagation-delay-assumed'));
  const local = plan({ trafficPath: { via: 'external-lb', externalTrafficPolicy: 'Local', healthCheckInterval: '10s', unhealthyThreshold: 3 } });
  assert.equal(local.timings.propagationDelaySeconds, 30);
  assert.equal(local.derivations.propagationDelaySeconds.formula, 'max(kubeProxyDelay, healthCheckInterval x unhealthyThreshold)');
  assert.equal(local.timings.preStopSeconds, 31);
  assert.equal(plan({ trafficPath: { via: 'external-lb' } }).timings.propagationDelaySeconds, 4);
  assert.equal(plan({ trafficPath: { via: 'kube-proxy', propagationDelay: '2500ms' } }).timings.preStopSeconds, 4);
});

test('an env or flag timeout is written in its format; a fixed one is read, not set', () => {
  assert.deepEqual(
    plan({ app: { gracefulShutdown: true, shutdownTimeout: { via: 'flag', name: '--shutdown-timeout', format: 'duration' } } }).shutdownTimeout,
    { via: 'flag', name: '--shutdown-timeout', value: '40s' },
  );
  const fixed = plan({ app: { gracefulShutdown: true, shutdownTimeout: { via: 'fixed', seconds: 30 } } });
  assert.deepEqual(fixed.shutdownTimeout, { via: 'fixed', seconds: 30 });
  assert.equal(fixed.timings.terminationGracePeriodSeconds, 40);
  assert.ok(ids(fixed.findings).includes('shutdown-timeout-below-longest-request'));
  const unknown = plan({ app: { gracefulShutdown: true } });
  assert.deepEqual(unknown.shutdownTimeout, { via: 'unknown' });
  assert.ok(ids(unknown.findings).includes('shutdown-timeout-unknown'));
});

test('advice never goes in a circle: each override finding, fixed as it says, is gone and brings no finding that undoes the fix', () => {
  const cases: Array<{ spec: Record<string, unknown>; id: string; fixed: Record<string, unknown> }> = [
    // preStop >= grace: raise the grace period to what the finding names.
    {
      spec: { termination: { terminationGracePeriodSeconds: 5 } },
      id: 'prestop-not-below-grace',
      fixed: { termination: { terminationGracePeriodSeconds: 50 } },
    },
    // timeout > grace - preStop: raise the grace period.
    {
      spec: { termination: { terminationGracePeriodSeconds: 30 } },
      id: 'shutdown-timeout-exceeds-grace',
      fixed: { termination: { terminationGracePeriodSeconds: 50 } },
    },
    // timeout < longest request: raise the timeout (and the computed grace follows).
    {
      spec: { termination: { shutdownTimeoutSeconds: 10 } },
      id: 'shutdown-timeout-below-longest-request',
      fixed: { termination: { shutdownTimeoutSeconds: 40 } },
    },
    // Both overrides: the first fix raises the timeout, the second the grace: never back down.
    {
      spec: { termination: { shutdownTimeoutSeconds: 40, terminationGracePeriodSeconds: 30 } },
      id: 'shutdown-timeout-exceeds-grace',
      fixed: { termination: { shutdownTimeoutSeconds: 40, terminationGracePeriodSeconds: 50 } },
    },
  ];
  for (const c of cases) {
    const before = plan(c.spec);
    const finding = before.findings.find((f) => f.id === c.id);
    assert.ok(finding, `${c.id} stands for ${JSON.stringify(c.spec)}`);
    // The remediation names the number the fixed spec uses.
    const termination = c.fixed.termination as Record<string, number>;
    const named = c.id === 'shutdown-timeout-below-longest-request' ? termination.shutdownTimeoutSeconds : termination.terminationGracePeriodSeconds;
    assert.match(finding.remediation, new RegExp(`\\b${named}\\b`), finding.remediation);
    const after = plan(c.fixed);
    const overrideIds = WORKLOAD_RULES.filter((r) => r.field.startsWith('spec.termination') || r.field === 'spec.app.shutdownTimeout').map((r) => r.id);
    assert.deepEqual(
      ids(after.findings).filter((id) => overrideIds.includes(id)),
      [],
      `${c.id}: ${ids(after.findings)}`,
    );
  }
});

test('rollout: surge first by default; required anti-affinity without a spare node replaces in place; the deadlock is named when forced', () => {
  const onePerNode = plan({ nodes: 2, rollout: { antiAffinity: 'required' } });
  assert.deepEqual([onePerNode.rollout.maxSurge, onePerNode.rollout.maxUnavailable], [0, 1]);
  const forced = plan({ nodes: 2, rollout: { antiAffinity: 'required', maxSurge: 1, maxUnavailable: 0 } });
  assert.equal(forced.findings[0]!.id, 'rollout-surge-deadlock');
  assert.ok(ids(plan({ replicas: 1 }).findings).includes('single-replica'));
  assert.equal(plan({ replicas: 1 }).rollout.pdbMaxUnavailable, null);
  assert.equal(plan({ disruptionBudget: false }).rollout.pdbMaxUnavailable, null);
  const sts = plan({ workload: { kind: 'StatefulSet' } });
  assert.deepEqual([sts.rollout.maxSurge, sts.rollout.maxUnavailable], [0, 1]);
  assert.ok(ids(sts.findings).includes('statefulset-no-surge'));
});

test('a timing no timer can hold is refused, naming the spec field', () => {
  assert.throws(
    () => plan({ traffic: { longRequestP99Seconds: 2_000_000 } }),
    (err: unknown) => err instanceof TimingOutOfRangeError && /spec\.traffic\.longRequestP99Seconds/.test(String(err)),
  );
});

test('gracegate plan: the contract numbers in JSON, and the text with every formula', () => {
  const r = runCli(['plan', 'examples/app-workload.yaml', '--format', 'json']);
  assert.equal(r.status, 0, r.stderr);
  const json = JSON.parse(r.stdout);
  assert.equal(json.kind, 'GracefulWorkloadPlan');
  for (const key of ['preStopSeconds', 'shutdownTimeoutSeconds', 'terminationGracePeriodSeconds']) assert.equal(typeof json.timings[key], 'number', key);
  assert.deepEqual([json.timings.preStopSeconds, json.timings.shutdownTimeoutSeconds, json.timings.terminationGracePeriodSeconds], [5, 40, 50]);
  assert.ok(Array.isArray(json.findings));
  const text = runCli(['plan', 'examples/app-workload.yaml']);
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /preStop {4}sleep 5s \(the kubelet's sleep action\)/);
  assert.match(text.stdout, /terminationGracePeriodSeconds +50s {2}= ceil\(preStopSeconds \+ shutdownTimeoutSeconds \+ exitMargin\)/);
  assert.match(text.stdout, /shutdown {3}env SHUTDOWN_TIMEOUT_SEC=40/);
});

test('gracegate plan exits 1 on an error finding, and the light path loads no cdk8s', () => {
  const file = specFile('distroless.yaml', JSON.stringify(workloadInput({ kubernetesVersion: '1.28', image: { distroless: true } })));
  const r = runCli(['plan', file], { env: { NODE_OPTIONS: '--require ./test/support/forbid-cdk8s.js' } });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stdout, /error +prestop-exec-distroless/);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hcConfigSchema } from '../../src/contract/hc-config';
import { planGateway } from '../../src/plan/plan-gateway';
import { podChanges } from '../../src/pod';
import { resolveGatewaySpec } from '../../src/schema/parse-spec';
import { specInput } from '../support/spec-builder';

/**
 * Where the CNI sends the kubelet's hooks from an address other callers share, the sidecar cannot
 * tell them apart (spec.health.witnessAllowFrom) and the plan says so: the NetworkPolicy is the
 * defence (an info finding while synth writes it, a warning with its fix when it does not).
 */

const HEALTH = { exposure: 'nodePort', port: 18180, nodePort: 30180 };

const planOf = (health: Record<string, unknown>, networkPolicy?: Record<string, unknown>) =>
  planGateway(resolveGatewaySpec(specInput({ spec: { health: { ...HEALTH, ...health }, ...(networkPolicy ? { networkPolicy } : {}) } })));

const witnessFindings = (plan: ReturnType<typeof planOf>) => plan.findings.filter((f) => f.id.startsWith('witness-')).map((f) => [f.id, f.severity, f.field]);

test('no witnessAllowFrom: the sidecar knows the kubelet by address, no finding, the config adds no source', () => {
  for (const np of [undefined, { enabled: false }]) {
    const plan = planOf({}, np);
    assert.deepEqual(witnessFindings(plan), []);
    assert.equal(podChanges(plan).hcConfig.terminationWitness?.allowFrom, undefined);
  }
});

test('witnessAllowFrom with the NetworkPolicy: an info finding naming the ranges and the policy as the defence; the sidecar serves them', () => {
  const plan = planOf({ witnessAllowFrom: ['100.64.0.0/16', 'fd00::1'] });
  assert.deepEqual(witnessFindings(plan), [['witness-source-by-policy-only', 'info', 'spec.health.witnessAllowFrom']]);
  const f = plan.findings.find((x) => x.id === 'witness-source-by-policy-only')!;
  assert.match(f.message, /100\.64\.0\.0\/16, fd00::1 .*cannot tell the kubelet from them by address/);
  assert.match(f.message, /witness port 18182 admits only the node/);
  assert.match(f.remediation, /enforces NetworkPolicy/);
  const config = podChanges(plan).hcConfig;
  assert.deepEqual(config.terminationWitness?.allowFrom, ['100.64.0.0/16', 'fd00::1']);
  // What the sidecar itself will read: its own schema accepts the ConfigMap's config.
  assert.deepEqual(hcConfigSchema.parse(config).terminationWitness.allowFrom, ['100.64.0.0/16', 'fd00::1']);
});

test('witnessAllowFrom without the NetworkPolicy: a warning whose fix turns the policy on, and the fixed plan keeps only the info', () => {
  const plan = planOf({ witnessAllowFrom: ['100.64.0.0/16'] }, { enabled: false });
  assert.deepEqual(witnessFindings(plan), [['witness-port-unguarded', 'warning', 'spec.networkPolicy.enabled']]);
  const f = plan.findings.find((x) => x.id === 'witness-port-unguarded')!;
  assert.match(f.message, /any caller in those ranges drains the gateway with two GETs/);
  assert.deepEqual(f.fixes?.[0]?.edits, [{ path: ['spec', 'networkPolicy', 'enabled'], set: true }]);
  assert.deepEqual(witnessFindings(planOf({ witnessAllowFrom: ['100.64.0.0/16'] }, { enabled: true })), [
    ['witness-source-by-policy-only', 'info', 'spec.health.witnessAllowFrom'],
  ]);
});

test('a witnessAllowFrom entry that is no address or block is refused naming the field and the entry', () => {
  assert.throws(() => planOf({ witnessAllowFrom: ['node-a'] }), /health\.witnessAllowFrom\.0|health\.witnessAllowFrom\[0\]/);
  assert.throws(() => planOf({ witnessAllowFrom: ['node-a'] }), /'node-a' is not an IP address or CIDR block/);
  assert.throws(() => planOf({ witnessAllowFrom: ['10.0.0.0/40'] }), /the prefix length must be 0-32/);
});

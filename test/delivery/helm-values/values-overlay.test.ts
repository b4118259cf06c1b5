import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Ajv from 'ajv';
import { parse } from 'yaml';
import { OverlayUnsupportedError, istioGatewayOverlay, valuesOverlayYaml } from '../../../src/delivery/helm-values/overlay';
import { podValues } from '../../../src/delivery/helm-values/pod-values';
import { allExamples, example } from '../../emit/helpers';
import { gatewayChart } from '../../support/fixtures';

/** The chart's real values.schema.json (draft-07, `additionalProperties: false` at the top). */
function schemaValidator(version: string) {
  const schema = JSON.parse(readFileSync(join(gatewayChart(version), 'values.schema.json'), 'utf8'));
  delete schema.$schema; // "http://json-schema.org/schema#": Ajv's default draft-07 is what Helm applies
  const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
  return (values: unknown): string[] =>
    validate(values) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

/** What Helm validates: the chart's values.yaml with the overlay merged over it. */
function merged(version: string, overlay: Record<string, unknown>): Record<string, unknown> {
  return { ...parse(readFileSync(join(gatewayChart(version), 'values.yaml'), 'utf8')), ...overlay };
}

describe('values overlay for istio/gateway: the real values.schema.json accepts it', () => {
  for (const version of ['1.27.9', '1.30.3']) {
    const validate = schemaValidator(version);
    for (const ex of allExamples()) {
      it(`${version}, ${ex.file}`, () => {
        const overlay = parse(valuesOverlayYaml(ex.changes, { kind: 'istio-gateway', version }));
        assert.deepEqual(validate(overlay), []);
        assert.deepEqual(validate(merged(version, overlay)), []);
      });
    }
    it(`${version}: the validator is not a rubber stamp (a misspelt key fails)`, () => {
      assert.notDeepEqual(validate({ additionalContainer: [] }), []);
    });
  }

  it("carries every pod change under the chart's key, field by field", () => {
    const { changes, plan } = example('haproxy.yaml');
    const o = istioGatewayOverlay(changes, '1.27.9') as Record<string, any>;
    assert.deepEqual(o.additionalContainers, [changes.hcContainer]);
    assert.deepEqual(o.lifecycle, { preStop: { httpGet: { path: '/wait-closed', port: 18182, scheme: 'HTTP' } } });
    assert.equal(o.terminationGracePeriodSeconds, plan.timings.terminationGracePeriodSeconds);
    assert.deepEqual(o.strategy.rollingUpdate, { maxSurge: plan.rollout.maxSurge, maxUnavailable: plan.rollout.maxUnavailable });
    assert.deepEqual(o.affinity, changes.affinity);
    assert.equal(o.minReadySeconds, plan.timings.minReadySeconds);
    assert.deepEqual(o.volumes, changes.volumes);
    assert.deepEqual(o.podAnnotations, changes.podAnnotations);
    assert.equal(o.replicaCount, 2);
    assert.deepEqual(o.autoscaling, { enabled: false });
    // No LB annotations outside model nlb; the traffic policy, because the LB addresses nodes.
    assert.deepEqual(o.service, { externalTrafficPolicy: 'Local' });
  });

  it("model nlb: the AWS Load Balancer Controller annotations go on the chart's Service", () => {
    const { changes } = example('nlb.yaml');
    const o = istioGatewayOverlay(changes, '1.30.3') as Record<string, any>;
    const a = o.service.annotations as Record<string, string>;
    const p = 'service.beta.kubernetes.io/aws-load-balancer-';
    assert.equal(a[`${p}type`], 'external');
    assert.equal(a[`${p}nlb-target-type`], 'ip');
    assert.equal(a[`${p}healthcheck-port`], '18180');
    assert.equal(a[`${p}healthcheck-path`], '/health_check.html');
    assert.equal(a[`${p}healthcheck-protocol`], 'HTTP');
    assert.equal(a[`${p}healthcheck-interval`], '10');
    assert.equal(a[`${p}healthcheck-timeout`], '10');
    assert.equal(a[`${p}healthcheck-healthy-threshold`], '3');
    assert.equal(a[`${p}healthcheck-unhealthy-threshold`], '3');
    assert.equal(
      a[`${p}target-group-attributes`],
      'deregistration_delay.timeout_seconds=300,deregistration_delay.connection_termination.enabled=false,target_health_state.unhealthy.connection_termination.enabled=false,target_health_state.unhealthy.draining_interval_seconds=198',
    );
    for (const v of Object.values(a)) assert.equal(typeof v, 'string');
  });

  it('1.26: refused with a pointer to the post-renderer; the keys really are missing from its schema', () => {
    const { changes } = example('haproxy.yaml');
    assert.throws(
      () => istioGatewayOverlay(changes, '1.26.8'),
      (err: Error) => {
        assert.ok(err instanceof OverlayUnsupportedError);
        assert.match(err.message, /'lifecycle' \(since 1\.27\)/);
        assert.match(err.message, /gracegate post-render/);
        return true;
      },
    );
    const errors = schemaValidator('1.26.8')({ ...podValues(changes), autoscaling: { enabled: false } });
    assert.ok(
      errors.some((e) => e.includes('"additionalProperty":"lifecycle"')),
      errors.join('\n'),
    );
  });

  it('refuses a proxy container name the chart does not render', () => {
    const ex = example('haproxy.yaml');
    const changes = { ...ex.changes, proxy: { ...ex.changes.proxy, containerName: 'envoy' } };
    assert.throws(() => istioGatewayOverlay(changes, '1.27.9'), /istio-proxy/);
  });
});

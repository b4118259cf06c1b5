/**
 * The Envoy series the loss alert reads do not exist under Istio's default stats matcher, and do
 * once the pod changes' proxyStatsMatcher suffixes are added: checked on a real Envoy with Istio's
 * matcher and stats tags (test/support/istio-envoy.ts), in the names Prometheus sees.
 */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import { test } from 'node:test';
import { ENVOY_SERIES } from '../../../src/emit/monitoring/targets';
import { planGateway } from '../../../src/plan/plan-gateway';
import { podChanges } from '../../../src/pod/pod-changes';
import { pinnedEnvoys } from '../../support/real-envoy';
import { resolved } from '../../support/spec-builder';
import { startIstioEnvoy } from '../../support/istio-envoy';

function exposition(hostPort: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(`http://${hostPort}/stats/prometheus`, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

const series = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`${name}{`));

test("Istio's default matcher drops the loss alert's series; the pod changes' suffixes bring them back, under Istio's names", async () => {
  const suffixes = (
    JSON.parse(podChanges(planGateway(resolved())).podAnnotations['proxy.istio.io/config']!) as { proxyStatsMatcher: { inclusionSuffixes: string[] } }
  ).proxyStatsMatcher.inclusionSuffixes;
  const version = pinnedEnvoys()[0]!.version;
  const [plain, dressed] = await Promise.all([startIstioEnvoy({ version }), startIstioEnvoy({ version, statsInclusionSuffixes: suffixes })]);
  try {
    const before = await exposition(plain.adminHostPort);
    for (const name of ENVOY_SERIES) assert.deepEqual(series(before, name), [], `${name} is not there by default`);
    const after = await exposition(dressed.adminHostPort);
    assert.deepEqual(
      series(after, ENVOY_SERIES[0]).filter((l) => l.includes('response_code_class="5xx"')),
      ['envoy_http_downstream_rq{response_code_class="5xx",http_conn_manager_prefix="outbound_0.0.0.0_8080"} 0'],
    );
    assert.deepEqual(series(after, ENVOY_SERIES[1]), ['envoy_http_downstream_cx_destroy_remote_active_rq{http_conn_manager_prefix="outbound_0.0.0.0_8080"} 0']);
  } finally {
    await Promise.all([plain.stop(), dressed.stop()]);
  }
});

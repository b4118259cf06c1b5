import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRun } from '../harness/expect';
import { runScenario } from '../harness/scenario';
import { istioProxy, proxyLabel } from '../harness/proxies';
import { S3 } from '../harness/scenarios';

// S3 (issue 5): behind an LB with retries + redispatch that flushes on DOWN, a naive termination
// shows no HTTP 5xx at all, yet clients saw broken connections and HAProxy re-sent requests. A
// dashboard of 5xx rates would call this lossless; the harness reports (and asserts) both. A
// baseline tests no sidecar, so it runs on the Istio release's Envoy only.
const proxy = istioProxy();
test(`S3 naive behind shutdown-sessions + redispatch: 0 HTTP 5xx, but connection errors and retries, ${proxyLabel(proxy)}`, { timeout: 90_000 }, async () => {
  const run = await runScenario(S3, proxy);
  const r = run.result;
  const http5xx = Object.entries(r.failures)
    .filter(([k]) => /^http-5\d\d$/.test(k))
    .reduce((s, [, n]) => s + n, 0);
  const connectionErrors = (r.failures['ECONNRESET'] ?? 0) + (r.failures['truncated'] ?? 0) + (r.failures['ECONNREFUSED'] ?? 0);
  assert.equal(http5xx, 0, `no client saw an HTTP 5xx\n${describeRun(run)}`);
  assert.equal(r.lbCounters.hrsp5xx, 0, `HAProxy answered no 5xx\n${describeRun(run)}`);
  assert.ok(connectionErrors > 0, `clients saw broken connections\n${describeRun(run)}`);
  assert.ok(r.lbCounters.wretr + r.lbCounters.wredis > 0, `HAProxy retried or redispatched refused connects\n${describeRun(run)}`);
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planGateway } from '../../src/plan/plan-gateway';
import { SANE_GRACE_PERIOD_SECONDS } from '../../src/model/grace-period';
import { resolveGatewaySpec } from '../../src/schema/parse-spec';
import { REPO_ROOT } from '../support/repo';
import { resolved, specInput } from '../support/spec-builder';

const plan = (traffic: Record<string, unknown>, spec: Record<string, unknown> = {}) =>
  planGateway(resolved({ spec: { ...spec, traffic: { longRequestP99Seconds: 20, ...traffic } } }));
const ids = (p: ReturnType<typeof plan>) => p.findings.map((f) => f.id).filter((id) => id.startsWith('long-lived'));

test('without spec.traffic.longLived the plan has no long-lived part and the same timings', () => {
  const p = plan({});
  assert.equal(p.longLived, null);
  assert.deepEqual(ids(p), []);
});

test('a bound that fits: Envoy rotates streams (GOAWAY first), the drain timeout covers the rotation, the grace period follows', () => {
  const without = plan({});
  const p = plan({ longLived: { kinds: ['websocket', 'grpc-stream', 'tcp'], clientsReconnect: true, maxStreamLifetimeSeconds: '5m' } });
  const ll = p.longLived!;
  assert.equal(ll.maxStreamDurationSeconds!.value, 300);
  assert.equal(ll.maxConnectionDurationSeconds!.value, 270, '300 - max(1, ceil(0.1 x 300))');
  assert.equal(ll.tcpMaxConnectionDurationSeconds!.value, 300);
  assert.equal(ll.streamWaitSeconds!.value, 302, '300 + ceil(2 x 1 s poll)');
  assert.equal(ll.waitCovered, true);
  assert.equal(p.timings.drainTimeoutSeconds, 302);
  assert.match(p.derivations.drainTimeoutSeconds.formula, /longLivedWaitSeconds/);
  assert.equal(
    p.timings.terminationGracePeriodSeconds - without.timings.terminationGracePeriodSeconds,
    302 - without.timings.drainTimeoutSeconds,
    'the grace period grows with the drain timeout, one for one',
  );
  assert.deepEqual(ids(p), ['long-lived-grpc-rotation-is-internal']);
  assert.match(ll.endings.find((e) => e.kind === 'websocket')!.askToLeave, /none/);
  assert.match(ll.endings.find((e) => e.kind === 'grpc-stream')!.askToLeave, /GOAWAY/);
});

test('tcp_proxy gets no duration without tcp among the kinds', () => {
  assert.equal(plan({ longLived: { kinds: ['sse'], clientsReconnect: true, maxStreamLifetimeSeconds: 60 } }).longLived!.tcpMaxConnectionDurationSeconds, null);
});

test('no bound: the drain waits for requests only, and a warning says the streams are cut, with the largest bound that fits', () => {
  const p = plan({ longLived: { kinds: ['websocket'], clientsReconnect: true } });
  assert.equal(p.timings.drainTimeoutSeconds, plan({}).timings.drainTimeoutSeconds);
  const f = p.findings.find((x) => x.id === 'long-lived-unbounded')!;
  assert.equal(f.severity, 'warning');
  const fit = p.longLived!.maxFittingLifetimeSeconds;
  assert.deepEqual(f.fixes![0]!.edits, [{ path: ['spec', 'traffic', 'longLived', 'maxStreamLifetimeSeconds'], set: fit }]);
  // The largest bound that fits is exact: it fits, one more second does not.
  const at = plan({ longLived: { kinds: ['websocket'], clientsReconnect: true, maxStreamLifetimeSeconds: fit } });
  assert.ok(at.longLived!.waitCovered && at.timings.terminationGracePeriodSeconds <= SANE_GRACE_PERIOD_SECONDS);
  const over = plan({ longLived: { kinds: ['websocket'], clientsReconnect: true, maxStreamLifetimeSeconds: fit + 1 } });
  assert.equal(over.longLived!.waitCovered, false);
  assert.deepEqual(ids(over), ['long-lived-lifetime-exceeds-grace']);
  assert.equal(over.timings.drainTimeoutSeconds, plan({}).timings.drainTimeoutSeconds, 'a bound that does not fit leaves the drain timeout alone');
});

test('clients that do not reconnect: an error, fixed by making them reconnect', () => {
  const p = plan({ longLived: { kinds: ['sse'], clientsReconnect: false, maxStreamLifetimeSeconds: 60 } });
  const f = p.findings.find((x) => x.id === 'long-lived-clients-do-not-reconnect')!;
  assert.equal(f.severity, 'error');
  assert.equal(f.evidence, 'docs/long-lived.md');
});

test('a drain timeout override below the stream wait: the streams are cut, the fix removes the override', () => {
  const p = plan({ longLived: { kinds: ['grpc-stream'], clientsReconnect: true, maxStreamLifetimeSeconds: 120 } }, { drain: { timeout: 30 } });
  assert.equal(p.timings.drainTimeoutSeconds, 30);
  assert.deepEqual(p.findings.find((x) => x.id === 'long-lived-drain-timeout-below-lifetime')!.fixes![0]!.edits, [
    { path: ['spec', 'drain', 'timeout'], remove: true },
  ]);
});

test('drain-first behind an LB that does not re-send refused connects: a client with a short reconnect tolerance is warned', () => {
  const p = planGateway(
    resolveGatewaySpec(
      specInput({
        spec: {
          loadBalancer: { model: 'haproxy', onMarkedDown: 'shutdown-sessions', redispatch: false },
          sequence: 'drain-first',
          traffic: { longRequestP99Seconds: 20, longLived: { kinds: ['websocket'], clientsReconnect: true, reconnectToleranceSeconds: 1 } },
        },
      }),
    ),
  );
  assert.equal(p.sequence, 'drain-first');
  assert.ok(ids(p).includes('long-lived-reconnect-refused-until-down'));
  const tolerant = planGateway(
    resolveGatewaySpec(
      specInput({
        spec: {
          loadBalancer: { model: 'haproxy', onMarkedDown: 'shutdown-sessions', redispatch: false },
          sequence: 'drain-first',
          traffic: {
            longRequestP99Seconds: 20,
            longLived: { kinds: ['websocket'], clientsReconnect: true, reconnectToleranceSeconds: p.timings.lbDetectSeconds },
          },
        },
      }),
    ),
  );
  assert.ok(!ids(tolerant).includes('long-lived-reconnect-refused-until-down'), 'a tolerance of lbDetectSeconds is enough');
});

test('a bound below the longest request: max_stream_duration would cut requests too; the fix raises it only where the grace period still holds', () => {
  const p = plan({ longRequestP99Seconds: 20, longLived: { kinds: ['websocket'], clientsReconnect: true, maxStreamLifetimeSeconds: 10 } });
  const f = p.findings.find((x) => x.id === 'long-lived-bound-cuts-requests')!;
  assert.match(f.message, /requests longer than that are cut \(the longest the plan expects is ceil\(1\.2 x longRequestP99Seconds\) = 24s\)/);
  assert.deepEqual(f.fixes![0]!.edits, [{ path: ['spec', 'traffic', 'longLived', 'maxStreamLifetimeSeconds'], set: 24 }]);
  const fixed = plan({ longRequestP99Seconds: 20, longLived: { kinds: ['websocket'], clientsReconnect: true, maxStreamLifetimeSeconds: 24 } });
  assert.ok(!ids(fixed).includes('long-lived-bound-cuts-requests'));
  const none = plan({ longRequestP99Seconds: 3000, longLived: { kinds: ['websocket'], clientsReconnect: true, maxStreamLifetimeSeconds: 60 } });
  const g = none.findings.find((x) => x.id === 'long-lived-bound-cuts-requests')!;
  assert.deepEqual(g.fixes, [], 'no lifetime covers a 3600 s request within the grace period: no numeric fix to go in a circle with');
  assert.match(g.remediation, /move the streams to a gateway of their own/);
  assert.ok(
    !ids(plan({ longLived: { kinds: ['websocket'], clientsReconnect: true, maxStreamLifetimeSeconds: 24 } })).includes('long-lived-bound-cuts-requests'),
  );
});

test('spec.traffic.longLived: bad input names the field', () => {
  const bad = (longLived: unknown) => () => resolveGatewaySpec(specInput({ spec: { traffic: { longRequestP99Seconds: 20, longLived } } }));
  assert.throws(bad({ kinds: ['websocket'] }), /spec\.traffic\.longLived\.clientsReconnect.*required|required.*clientsReconnect/is);
  assert.throws(bad({ kinds: [], clientsReconnect: true }), /kinds/);
  assert.throws(bad({ kinds: ['mqtt'], clientsReconnect: true }), /kinds/);
  assert.throws(bad({ kinds: ['sse', 'sse'], clientsReconnect: true }), /listed twice/);
  assert.throws(bad({ kinds: ['sse'], clientsReconnect: true, maxStreamLifetimeSeconds: 5 }), /maxStreamLifetimeSeconds.*at least 10s/s);
});

test('every long-lived finding the planner can raise is described in docs/long-lived.md', () => {
  const source = readFileSync(join(REPO_ROOT, 'src/plan/long-lived.ts'), 'utf8');
  const ids = [...source.matchAll(/id: '(long-lived-[a-z-]+)'/g)].map((m) => m[1]!);
  assert.ok(ids.length >= 7, ids.join(', '));
  const doc = readFileSync(join(REPO_ROOT, 'docs/long-lived.md'), 'utf8');
  for (const id of ids) assert.ok(doc.includes(`\`${id}\``), `${id} is not in docs/long-lived.md`);
});

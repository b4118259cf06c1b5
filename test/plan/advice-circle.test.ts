import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { applyFix, describeFix, type Fix, type FixPath } from '../../src/core/fix';
import { pathText } from '../../src/core/json';
import type { Finding } from '../../src/model/finding';
import { planGateway } from '../../src/plan/plan-gateway';
import { resolveGatewaySpec } from '../../src/schema/parse-spec';
import { REPO_ROOT } from '../support/repo';
import { specInput } from '../support/spec-builder';
import { exampleSpecFiles } from '../support/examples';

/**
 * Advice never goes in a circle: every finding's machine-applicable fix, applied to the spec and
 * planned again, gives a valid spec without that finding, and walking the fixes of whatever the
 * new plan finds never comes back to a spec already seen on the way, nor undoes an edit just made.
 */

type Input = Record<string, unknown>;

const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : x,
  );

function valueAt(doc: unknown, path: FixPath): unknown {
  return path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string | number, unknown>)[k] : undefined), doc);
}

function findingsOf(input: Input, how: string): Finding[] {
  try {
    return planGateway(resolveGatewaySpec(input)).findings;
  } catch (err) {
    throw new Error(`${how} is not a valid spec: ${(err as Error).message}`);
  }
}

/** The seeds: every example, the rollout grid the replicas-1/nodes-1 circle came from, and one spec per LB trap. */
function seeds(): Array<{ name: string; input: Input }> {
  const out: Array<{ name: string; input: Input }> = [];
  for (const f of exampleSpecFiles('GracefulGateway')) {
    out.push({ name: `examples/${f}`, input: parse(readFileSync(join(REPO_ROOT, 'examples', f), 'utf8')) as Input });
  }
  const overrides: Array<Record<string, number>> = [
    {},
    { maxSurge: 1, maxUnavailable: 0 },
    { maxSurge: 0, maxUnavailable: 1 },
    { maxSurge: 2, maxUnavailable: 0 },
    { maxUnavailable: 2 },
  ];
  for (const replicas of [1, 2, 3]) {
    for (const nodes of [1, 2, 3, 4]) {
      for (const exposure of ['nodePort', 'hostPort']) {
        if (exposure === 'hostPort' && replicas > nodes) continue; // the schema refuses it
        for (const antiAffinity of [undefined, 'required', 'preferred', 'none']) {
          for (const o of overrides) {
            const rollout = { ...o, ...(antiAffinity ? { antiAffinity } : {}) };
            const health = exposure === 'hostPort' ? { exposure } : { exposure, nodePort: 30180 };
            out.push({
              name: `replicas ${replicas}, nodes ${nodes}, ${exposure}, rollout ${JSON.stringify(rollout)}`,
              input: specInput({ spec: { replicas, nodes, health, rollout } }),
            });
          }
        }
      }
    }
  }
  const lb = (loadBalancer: Record<string, unknown>, extra: Record<string, unknown> = {}) => specInput({ spec: { loadBalancer, ...extra } });
  out.push(
    { name: 'haproxy flush without redispatch', input: lb({ model: 'haproxy', onMarkedDown: 'shutdown-sessions' }) },
    {
      name: 'haproxy flush without redispatch, drain-first forced',
      input: lb({ model: 'haproxy', onMarkedDown: 'shutdown-sessions' }, { sequence: 'drain-first' }),
    },
    {
      name: 'f5 reset, a loss limit of one request',
      input: lb({ model: 'f5', serviceDownAction: 'reset' }, { traffic: { longRequestP99Seconds: 20, maxExpectedLossPerTermination: 1 } }),
    },
    { name: 'haproxy flush, redispatch, retries 0', input: lb({ model: 'haproxy', onMarkedDown: 'shutdown-sessions', redispatch: true, retries: 0 }) },
    { name: 'citrix flush', input: lb({ model: 'citrix' }) },
    { name: 'citrix flush, persistence', input: lb({ model: 'citrix', persistenceType: 'SOURCEIP' }) },
    { name: 'f5 drop', input: lb({ model: 'f5', serviceDownAction: 'drop' }) },
    { name: 'f5 reset', input: lb({ model: 'f5', serviceDownAction: 'reset' }) },
    { name: 'nlb instance', input: lb({ model: 'nlb' }) },
    {
      name: 'nlb ip without readiness gate, short delay',
      input: lb({ model: 'nlb', targetType: 'ip', podReadinessGate: false, deregistrationConnectionTermination: true, deregistrationDelay: 10 }),
    },
    {
      name: 'envoy close connections over http',
      input: lb({ model: 'envoy', activeHealthCheck: { interval: '2s' }, closeConnectionsOnHostHealthFailure: true }, { health: { exposure: 'clusterIP' } }),
    },
    {
      name: 'haproxy reusing connections to the pod',
      input: lb({ model: 'haproxy', onMarkedDown: 'shutdown-sessions', redispatch: true, httpServerClose: false }),
    },
    { name: 'haproxy, clusterIP exposure', input: specInput({ spec: { health: { exposure: 'clusterIP' } } }) },
    { name: 'drain timeout below p99', input: specInput({ spec: { drain: { timeout: 30 } } }) },
    { name: 'native sidecar on 1.28', input: specInput({ spec: { kubernetesVersion: '1.28', health: { exposure: 'nodePort', sidecar: 'native' } } }) },
    {
      name: 'long-lived, clients do not reconnect, no bound',
      input: specInput({
        spec: { traffic: { longRequestP99Seconds: 30, longLived: { kinds: ['websocket', 'grpc-stream', 'tcp'], clientsReconnect: false } } },
      }),
    },
    {
      name: 'long-lived, reconnecting, a bound of hours',
      input: specInput({
        spec: { traffic: { longRequestP99Seconds: 30, longLived: { kinds: ['sse'], clientsReconnect: true, maxStreamLifetimeSeconds: 7200 } } },
      }),
    },
    {
      name: 'long-lived, a bound above a drain timeout override',
      input: specInput({
        spec: {
          drain: { timeout: 40 },
          traffic: { longRequestP99Seconds: 30, longLived: { kinds: ['grpc-stream'], clientsReconnect: true, maxStreamLifetimeSeconds: 900 } },
        },
      }),
    },
    {
      name: 'long-lived, a bound below the longest request',
      input: specInput({
        spec: { traffic: { longRequestP99Seconds: 30, longLived: { kinds: ['websocket'], clientsReconnect: true, maxStreamLifetimeSeconds: 10 } } },
      }),
    },
    {
      name: 'long-lived, a bound below a request no grace period holds',
      input: specInput({
        spec: { traffic: { longRequestP99Seconds: 3000, longLived: { kinds: ['sse'], clientsReconnect: true, maxStreamLifetimeSeconds: 60 } } },
      }),
    },
    {
      name: 'long-lived, refused until DOWN',
      input: lb(
        { model: 'haproxy', onMarkedDown: 'shutdown-sessions', redispatch: false },
        { traffic: { longRequestP99Seconds: 30, longLived: { kinds: ['websocket'], clientsReconnect: true, reconnectToleranceSeconds: 1 } } },
      ),
    },
    { name: 'native sidecar, version unknown', input: specInput({ spec: { health: { exposure: 'nodePort', sidecar: 'native' } } }) },
  );
  return out;
}

type Walk = { plans: number; fixesApplied: number; ids: Set<string>; fixless: Set<string> };

/**
 * Depth-first over "apply one fix of one finding": a spec met again while it is still on the
 * current path is a circle. Each spec is expanded once (black), so the walk is finite.
 */
function walk(seed: { name: string; input: Input }, stats: Walk, done: Set<string>): void {
  const onPath = new Map<string, string>();
  const visit = (input: Input, how: string, findings: Finding[]): void => {
    const key = canonical(input);
    if (onPath.has(key)) assert.fail(`advice goes in a circle: ${how} comes back to ${onPath.get(key)}`);
    if (done.has(key)) return;
    onPath.set(key, how);
    stats.plans++;
    for (const f of findings) {
      stats.ids.add(f.id);
      if (!f.fixes || f.fixes.length === 0) {
        stats.fixless.add(`${f.severity} ${f.id}`);
        continue;
      }
      for (const fix of f.fixes) {
        const step = `${how} → fix '${fix.description}' of ${f.id} (${describeFix(fix)})`;
        const next = applyFix(input, fix);
        stats.fixesApplied++;
        const after = findingsOf(next, step);
        assert.ok(!after.some((g) => g.id === f.id), `${step}: the finding is still there`);
        const before = new Set(findings.map((g) => g.id));
        for (const g of after.filter((x) => !before.has(x.id))) {
          for (const h of g.fixes ?? []) assertNotUndone(input, fix, next, g, h, step);
        }
        visit(next, step, after);
      }
    }
    onPath.delete(key);
    done.add(key);
  };
  visit(seed.input, seed.name, findingsOf(seed.input, seed.name));
}

/** A new finding's fix must not put back a value the fix just changed. */
function assertNotUndone(before: Input, fix: Fix, after: Input, g: Finding, h: Fix, step: string): void {
  const again = applyFix(after, h);
  for (const e of fix.edits) {
    const was = valueAt(before, e.path);
    const now = valueAt(after, e.path);
    if (canonical(now) === canonical(was)) continue;
    assert.notEqual(
      canonical(valueAt(again, e.path)),
      canonical(was),
      `${step} brings ${g.id}, whose fix '${h.description}' (${describeFix(h)}) undoes ${pathText(e.path)}`,
    );
  }
}

test('every fix clears its finding and no chain of fixes comes back to where it started', () => {
  const stats: Walk = { plans: 0, fixesApplied: 0, ids: new Set(), fixless: new Set() };
  const done = new Set<string>();
  for (const seed of seeds()) walk(seed, stats, done);
  // The walk covered what it claims: the rollout traps and the LB traps, each with fixes applied.
  for (const id of [
    'rollout-surge-deadlock',
    'rollout-takes-all-pods',
    'anti-affinity-unschedulable',
    'single-replica',
    'drain-first-without-redispatch',
    'no-lossless-order',
    'expected-loss-above-limit',
    'sequence-not-least-loss',
    'health-clusterip-unreachable',
    'drain-timeout-below-p99',
    'nlb-instance-probe-bypasses-sidecar',
    'nlb-deregistration-delay-short',
    'envoy-close-connections-not-http',
    'f5-service-down-drop',
    'citrix-trofs-keeps-persistent-clients',
    'keepalive-race-not-retried',
    'native-sidecar-unsupported',
    'native-sidecar-version-unknown',
  ]) {
    assert.ok(stats.ids.has(id), `the corpus reaches ${id}`);
  }
  assert.ok(stats.fixesApplied > 500, `fixes applied: ${stats.fixesApplied}`);
  // Every error the corpus meets says how to get out of it, as an edit.
  assert.deepEqual(
    [...stats.fixless].filter((f) => f.startsWith('error ')),
    [],
  );
});

test('replicas 1, nodes 1: the default plan has no rollout error, and the old circle is broken', () => {
  const plan = (rollout: Record<string, unknown>) => planGateway(resolveGatewaySpec(specInput({ spec: { replicas: 1, nodes: 1, rollout } })));
  const byDefault = plan({});
  assert.deepEqual([byDefault.rollout.maxSurge, byDefault.rollout.maxUnavailable, byDefault.rollout.antiAffinity], [1, 0, 'preferred']);
  assert.deepEqual(
    byDefault.findings.filter((f) => f.id.startsWith('rollout') || f.severity === 'error').map((f) => f.id),
    [],
  );
  assert.match(byDefault.rollout.reason, /surge one pod beside it/);

  // The user's first state (in place) names the way out that keeps a pod: a surge with preferred anti-affinity.
  const inPlace = plan({ maxSurge: 0, maxUnavailable: 1, antiAffinity: 'required' }).findings.find((f) => f.id === 'rollout-takes-all-pods')!;
  assert.match(inPlace.remediation, /antiAffinity preferred/);
  assert.ok(inPlace.fixes!.every((fx) => fx.edits.some((e) => pathText(e.path) === 'spec.rollout.maxUnavailable' && 'set' in e && e.set === 0)));
  // The second state (surge, required, no spare node) no longer sends the user back to maxUnavailable 1.
  const deadlock = plan({ maxSurge: 1, maxUnavailable: 0, antiAffinity: 'required' }).findings.find((f) => f.id === 'rollout-surge-deadlock')!;
  assert.doesNotMatch(deadlock.remediation, /maxUnavailable 1/);
  assert.match(deadlock.remediation, /antiAffinity preferred/);
  assert.match(deadlock.message, /takes the only pod down/);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planGateway, type Plan } from '../../src/plan/plan-gateway';
import { resolveMaxUnavailable, unavailablePercentFor } from '../../src/model/rollout';
import { HPA_DEFAULT_SCALE_DOWN_POLICIES, scaleDownRemovals, type ScaleDownRules } from '../../src/plan/scaling';
import { SpecError } from '../../src/schema/parse-spec';
import { resolved, specInput } from '../support/spec-builder';

type Spec = Record<string, unknown>;

/** An autoscaled spec: the builder's lab spec with `replicas` swapped for `autoscaling`. */
function auto(autoscaling: Spec, spec: Spec = {}): Spec {
  return { replicas: undefined, autoscaling, ...spec };
}
const planOf = (spec: Spec): Plan => planGateway(resolved({ spec }));
const ids = (plan: Plan) => plan.findings.map((f) => f.id);

function problems(spec: Spec): string[] {
  try {
    resolved({ spec });
  } catch (err) {
    assert.ok(err instanceof SpecError, String(err));
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
  assert.fail('expected a SpecError');
}

const rules = (policies: ScaleDownRules['policies'], selectPolicy: ScaleDownRules['selectPolicy'] = 'Max'): ScaleDownRules => ({
  stabilizationWindowSeconds: 300,
  selectPolicy,
  policies,
  sources: { stabilizationWindowSeconds: '', selectPolicy: '', policies: '' },
});

test('spec: replicas or autoscaling, exactly one; the HPA range must be a range', () => {
  assert.deepEqual(problems({ replicas: undefined }), [
    'spec.replicas: required (a whole number), or spec.autoscaling {minReplicas, maxReplicas} when an HPA scales the gateway',
  ]);
  assert.deepEqual(problems({ autoscaling: { minReplicas: 2, maxReplicas: 4 } }), [
    "spec.autoscaling: give spec.replicas or spec.autoscaling, not both: with an HPA the replica count is the HPA's",
  ]);
  assert.deepEqual(problems(auto({ minReplicas: 3, maxReplicas: 2 })), ['spec.autoscaling.maxReplicas: must be at least minReplicas (3)']);
  assert.deepEqual(problems(auto({ minReplicas: 2 })), ['spec.autoscaling.maxReplicas: required (a whole number)']);
  assert.deepEqual(problems(auto({ maxReplicas: 4, behavior: { scaleDown: { policies: [{ type: 'Pods', value: 1, periodSeconds: 3600 }] } } })), [
    'spec.autoscaling.behavior.scaleDown.policies[0].periodSeconds: must be at most 1800, got 3600',
  ]);
  assert.deepEqual(problems(auto({ maxReplicas: 4 }, { nodes: 3, health: { exposure: 'hostPort' } })), [
    "spec.autoscaling.maxReplicas: hostPort allows one pod per node: maxReplicas (4) cannot exceed nodes (3); the HPA's extra pods would stay Pending",
  ]);
  const { spec } = resolved({ spec: auto({ maxReplicas: 4 }) });
  assert.equal(spec.spec.autoscaling!.minReplicas, 1, "Kubernetes' default");
});

test('scale-down arithmetic follows the HPA controller: per period, from the count at its start, combined by selectPolicy', () => {
  const defaults = rules(HPA_DEFAULT_SCALE_DOWN_POLICIES.map((p) => ({ ...p })));
  assert.equal(scaleDownRemovals(1, 5, defaults, 0), 4, '100 % per 15 s: everything above minReplicas in one decision');
  assert.equal(scaleDownRemovals(2, 5, defaults, 130), 3, 'never below minReplicas');
  // One pod per 60 s over a 130 s sequence: decisions at 0, 60 and 120 s (a deletion counts for 60 s).
  assert.equal(scaleDownRemovals(1, 10, rules([{ type: 'Pods', value: 1, periodSeconds: 60 }]), 130), 3);
  assert.equal(scaleDownRemovals(1, 10, rules([{ type: 'Pods', value: 1, periodSeconds: 60 }]), 0), 1);
  // 50 % per 60 s from 8: floor(8 x 0.5) = 4 at 0 s, then floor(4 x 0.5) = 2 at 60 s.
  assert.equal(scaleDownRemovals(2, 8, rules([{ type: 'Percent', value: 50, periodSeconds: 60 }]), 130), 6);
  // Min takes the smallest change: one pod per 15 s rather than 100 %.
  const min = rules(
    [
      { type: 'Pods', value: 1, periodSeconds: 15 },
      { type: 'Percent', value: 100, periodSeconds: 15 },
    ],
    'Min',
  );
  assert.equal(scaleDownRemovals(1, 5, min, 22), 2);
  assert.equal(scaleDownRemovals(1, 5, { ...min, selectPolicy: 'Max' }, 22), 4);
  assert.equal(scaleDownRemovals(1, 5, { ...min, selectPolicy: 'Disabled' }, 600), 0);
});

test('the plan carries the range and the scale-down numbers, each explaining itself', () => {
  const plan = planOf(auto({ minReplicas: 2, maxReplicas: 6 }));
  assert.equal(plan.replicas, null);
  assert.equal(plan.scaling.mode, 'autoscaled');
  if (plan.scaling.mode !== 'autoscaled') return;
  assert.deepEqual([plan.scaling.minReplicas, plan.scaling.maxReplicas], [2, 6]);
  assert.equal(plan.scaling.scaleDown.stabilizationWindowSeconds, 300);
  assert.match(
    plan.scaling.scaleDown.sources.stabilizationWindowSeconds,
    /^default: kube-controller-manager --horizontal-pod-autoscaler-downscale-stabilization 5m/,
  );
  assert.equal(plan.scaling.scaleDownPodsPerStep.value, 4);
  assert.equal(plan.scaling.scaleDownPodsAtOnce.value, 4);
  assert.equal(plan.scaling.scaleDownPodsAtOnce.inputs.sequenceSeconds!.value, plan.timings.sequenceSeconds);
  assert.equal(plan.scaling.scaleDownPodsAtOnce.unit, 'count');
  assert.match(plan.scaling.scaleDownPodsPerStep.inputs.policies!.source, /^default: Kubernetes autoscaling\/v2 100 Percent per 15 s/);
  assert.equal(planOf({ replicas: 2 }).scaling.mode, 'fixed');
});

test('maxUnavailable as a percentage: 0 while a node is spare, 1 when every node holds a pod (exact up to 10 nodes)', () => {
  for (let nodes = 2; nodes <= 10; nodes++) {
    const p = unavailablePercentFor(nodes);
    assert.equal(resolveMaxUnavailable(p, nodes), 1, `${p} at ${nodes} replicas on ${nodes} nodes`);
    for (let n = 1; n < nodes; n++) assert.equal(resolveMaxUnavailable(p, n), 0, `${p} at ${n} replicas on ${nodes} nodes`);
  }
  // Beyond 10 nodes a count just below the node count may also resolve to 1: a dip, never a deadlock.
  assert.equal(resolveMaxUnavailable(unavailablePercentFor(30), 29), 1);
  for (const nodes of [11, 30, 100]) assert.ok(resolveMaxUnavailable(unavailablePercentFor(nodes), nodes) >= 1);
});

test('rollout over the range: required anti-affinity up to every node surges where it can and never deadlocks', () => {
  const plan = planOf(auto({ minReplicas: 2, maxReplicas: 3 }, { nodes: 3 }));
  assert.deepEqual([plan.rollout.antiAffinity, plan.rollout.maxSurge, plan.rollout.maxUnavailable, plan.rollout.pdbMaxUnavailable], ['required', 1, '34%', 1]);
  assert.deepEqual(
    ids(plan).filter((id) => id.startsWith('rollout') || id.startsWith('autoscale')),
    [],
    'from 3 to 2: one pod per scale-down',
  );
  // A spare node at every count: surge, keep capacity.
  const spare = planOf(auto({ minReplicas: 2, maxReplicas: 3 }, { nodes: 4 }));
  assert.deepEqual([spare.rollout.antiAffinity, spare.rollout.maxSurge, spare.rollout.maxUnavailable], ['required', 1, 0]);
  // More replicas than nodes: preferred by default (the HPA can grow past the nodes).
  const over = planOf(auto({ minReplicas: 2, maxReplicas: 8 }, { nodes: 3 }));
  assert.deepEqual([over.rollout.antiAffinity, over.rollout.maxSurge, over.rollout.maxUnavailable], ['preferred', 1, 0]);
  assert.ok(!ids(over).some((id) => id.startsWith('rollout')));
});

test('findings over the range: required anti-affinity past the nodes, minReplicas 1, overrides that fail at one end', () => {
  const blocked = planOf(auto({ minReplicas: 2, maxReplicas: 5 }, { nodes: 3, rollout: { antiAffinity: 'required' } }));
  const f = blocked.findings.find((x) => x.id === 'autoscale-anti-affinity-blocks-scale-up')!;
  assert.equal(f.severity, 'error');
  assert.match(f.message, /on 3 node\(s\) the HPA can run 3 of its maxReplicas 5/);
  assert.equal(f.remediation, 'use antiAffinity preferred, or maxReplicas 3, or 5 nodes');

  const one = planOf(auto({ minReplicas: 1, maxReplicas: 4 }));
  assert.equal(one.findings.find((x) => x.id === 'autoscale-min-one')!.severity, 'warning');
  assert.equal(one.rollout.pdbMaxUnavailable, 1, 'one at a time at every count; at one replica the PDB lets a node drain evict it');

  const deadlock = planOf(auto({ minReplicas: 2, maxReplicas: 3 }, { nodes: 3, rollout: { maxSurge: 1, maxUnavailable: 0, antiAffinity: 'required' } }));
  assert.match(
    deadlock.findings.find((x) => x.id === 'rollout-surge-deadlock')!.message,
    /once the HPA runs 3 or more replicas \(maxReplicas 3\) the surge pod stays Pending forever/,
  );
  const takesAll = planOf(auto({ minReplicas: 2, maxReplicas: 6 }, { rollout: { maxSurge: 0, maxUnavailable: 2 } }));
  assert.equal(
    takesAll.findings.find((x) => x.id === 'rollout-takes-all-pods')!.remediation,
    'use maxUnavailable 1 or less, or remove the spec.rollout overrides',
  );
});

test('several pods leaving at once: a warning with drain-first (a refused connect may be re-sent to another leaving pod), info otherwise', () => {
  const drainFirst = planOf(auto({ minReplicas: 2, maxReplicas: 6 }));
  assert.equal(drainFirst.sequence, 'drain-first');
  const w = drainFirst.findings.find((x) => x.id === 'autoscale-drain-first-overlap')!;
  assert.equal(w.severity, 'warning');
  assert.equal(w.expectedLoss, 'refused-connections');
  assert.match(w.message, /from 6 replicas, one HPA decision removes 4 pod\(s\).*new requests go to the other 2 at once/);
  const soft = planOf(auto({ minReplicas: 2, maxReplicas: 6 }, { loadBalancer: { model: 'haproxy', onMarkedDown: 'shutdown-sessions', disableOn404: true } }));
  assert.equal(soft.sequence, 'soft-drain');
  assert.equal(soft.findings.find((x) => x.id === 'autoscale-pods-leave-together')!.severity, 'info');
  assert.ok(!ids(soft).includes('autoscale-drain-first-overlap'));
  // One pod per sequence: neither.
  const paced = planOf(
    auto({
      minReplicas: 2,
      maxReplicas: 6,
      behavior: { scaleDown: { policies: [{ type: 'Pods', value: 1, periodSeconds: Math.ceil(drainFirst.timings.sequenceSeconds) }] } },
    }),
  );
  assert.ok(!ids(paced).some((id) => id === 'autoscale-drain-first-overlap' || id === 'autoscale-pods-leave-together'));
  // A stabilization window shorter than one termination.
  const short = planOf(auto({ minReplicas: 2, maxReplicas: 3, behavior: { scaleDown: { stabilizationWindowSeconds: 30 } } }));
  assert.match(
    short.findings.find((x) => x.id === 'autoscale-scale-down-window-short')!.remediation,
    new RegExp(`stabilizationWindowSeconds ${Math.ceil(short.timings.sequenceSeconds)} or more`),
  );
});

/*
 * Advice never goes in a circle: each autoscaling finding's remediation, as the spec edits its
 * words name, clears the finding, gives a valid spec, and leads to no finding whose remediation
 * would undo an edit just made. The walk goes three fixes deep from seeds that reach every finding.
 */
type Edit = { path: string[]; value: unknown };
const SCALE_IDS = [
  'autoscale-anti-affinity-blocks-scale-up',
  'autoscale-min-one',
  'autoscale-drain-first-overlap',
  'autoscale-pods-leave-together',
  'autoscale-scale-down-window-short',
  'rollout-surge-deadlock',
  'rollout-takes-all-pods',
];

/** The alternatives a remediation offers, as edits; each must appear in the remediation's words. */
function fixesOf(id: string, plan: Plan, s: Spec): Edit[][] {
  const a = s.autoscaling as Spec;
  const nodes = s.nodes as number;
  const seq = Math.ceil(plan.timings.sequenceSeconds);
  const onePerSequence = [{ path: ['autoscaling', 'behavior', 'scaleDown', 'policies'], value: [{ type: 'Pods', value: 1, periodSeconds: seq }] }];
  switch (id) {
    case 'autoscale-anti-affinity-blocks-scale-up':
      return [
        [{ path: ['rollout', 'antiAffinity'], value: 'preferred' }],
        [{ path: ['autoscaling', 'maxReplicas'], value: nodes }],
        [{ path: ['nodes'], value: a.maxReplicas }],
      ];
    case 'autoscale-min-one':
      return [
        [
          { path: ['autoscaling', 'minReplicas'], value: 2 },
          ...((a.maxReplicas as number) < 2 ? [{ path: ['autoscaling', 'maxReplicas'], value: 2 }] : []),
          ...(plan.rollout.onePodPerNode && nodes < 2 ? [{ path: ['nodes'], value: 2 }] : []),
        ],
      ];
    case 'autoscale-drain-first-overlap':
    case 'autoscale-pods-leave-together':
      return [onePerSequence];
    case 'autoscale-scale-down-window-short':
      return [[{ path: ['autoscaling', 'behavior', 'scaleDown', 'stabilizationWindowSeconds'], value: seq }]];
    case 'rollout-surge-deadlock':
      return [[{ path: ['rollout'], value: { antiAffinity: (s.rollout as Spec | undefined)?.antiAffinity } }], [{ path: ['nodes'], value: nodes + 1 }]];
    case 'rollout-takes-all-pods': {
      const r = s.rollout as Spec | undefined;
      if (r?.maxSurge !== undefined || r?.maxUnavailable !== undefined) return [[{ path: ['rollout'], value: { antiAffinity: r.antiAffinity } }]];
      const hostPort = (s.health as Spec).exposure === 'hostPort';
      return [
        [...(hostPort ? [{ path: ['health'], value: { exposure: 'nodePort' } }] : []), { path: ['rollout', 'antiAffinity'], value: 'preferred' }],
        [{ path: ['nodes'], value: nodes + 1 }],
      ];
    }
    default:
      return [];
  }
}

function applyEdits(s: Spec, edits: Edit[]): Spec {
  const out = structuredClone(s);
  for (const e of edits) {
    let at = out as Record<string, unknown>;
    for (const k of e.path.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
    at[e.path.at(-1)!] = structuredClone(e.value);
  }
  return out;
}

test('autoscaling advice never goes in a circle (each fix clears its finding; no fix undoes the one before)', () => {
  const base = specInput().spec as Spec;
  const seeds: Spec[] = [
    auto({ minReplicas: 1, maxReplicas: 5 }, { nodes: 3, rollout: { antiAffinity: 'required' } }),
    auto({ minReplicas: 1, maxReplicas: 1 }, { nodes: 1 }),
    auto(
      { minReplicas: 2, maxReplicas: 6, behavior: { scaleDown: { stabilizationWindowSeconds: 10 } } },
      { loadBalancer: { model: 'haproxy', onMarkedDown: 'shutdown-sessions', disableOn404: true } },
    ),
    auto({ minReplicas: 2, maxReplicas: 3 }, { nodes: 3, rollout: { maxSurge: 1, maxUnavailable: 0, antiAffinity: 'required' } }),
    auto({ minReplicas: 2, maxReplicas: 4 }, { rollout: { maxSurge: 0, maxUnavailable: 2 } }),
    auto({ minReplicas: 1, maxReplicas: 1 }, { nodes: 1, health: { exposure: 'hostPort' } }),
    auto({ minReplicas: 1, maxReplicas: 1 }, { nodes: 1, rollout: { antiAffinity: 'required' } }),
  ].map((s) => ({ ...base, ...s }));
  const reached = new Set<string>();
  const walk = (s: Spec, lastEdits: Edit[], seen: string[], depth: number): void => {
    let plan: Plan;
    try {
      plan = planOf(s);
    } catch (err) {
      // Every seed is valid, so an invalid spec here came from a fix.
      assert.fail(`a fix led to an invalid spec: ${(err as Error).message}\n${JSON.stringify(s)}`);
    }
    for (const f of plan.findings.filter((x) => SCALE_IDS.includes(x.id))) {
      reached.add(f.id);
      for (const edits of fixesOf(f.id, plan, s)) {
        for (const e of edits) {
          const word = { rollout: 'overrides', health: 'exposure nodePort', nodes: 'node' }[e.path.at(-1)!] ?? e.path.at(-1)!;
          assert.ok(f.remediation.includes(word), `${f.id}: the remediation '${f.remediation}' names ${word}`);
        }
        // An edit that undoes the previous fix (same path back to its old value) is a circle.
        for (const e of edits) {
          const undoes = lastEdits.find((l) => l.path.join('.') === e.path.join('.'));
          assert.ok(!undoes || JSON.stringify(undoes.value) === JSON.stringify(e.value), `${f.id} undoes ${undoes?.path.join('.')}`);
        }
        const next = applyEdits(s, edits);
        const key = JSON.stringify(next);
        assert.ok(!seen.includes(key), `${f.id}: the fix returns to a spec already on the way`);
        const after = planOf(next);
        assert.ok(!after.findings.some((x) => x.id === f.id), `${f.id}: its fix clears it (${JSON.stringify(edits)})`);
        if (depth < 3) walk(next, edits, [...seen, key], depth + 1);
      }
    }
  };
  for (const s of seeds) walk(s, [], [JSON.stringify(s)], 0);
  assert.deepEqual([...reached].sort(), [...SCALE_IDS].sort(), 'the seeds reach every autoscaling finding');
});

/** The HPA controller's arithmetic written the obvious way (every past decision summed at every step): the reference the planner's linear walk is held to. */
function referenceRemovals(min: number, max: number, r: ScaleDownRules, windowSeconds: number): number {
  if (r.selectPolicy === 'Disabled') return 0;
  const events: Array<{ at: number; removed: number }> = [];
  let count = max;
  for (let t = 0; t < windowSeconds || t === 0; t += 15) {
    const floors = r.policies.map((p) => {
      const inPeriod = events.filter((e) => e.at + p.periodSeconds > t).reduce((n, e) => n + e.removed, 0);
      return p.type === 'Pods' ? count + inPeriod - p.value : Math.floor((count + inPeriod) * (1 - p.value / 100));
    });
    const floor = r.selectPolicy === 'Max' ? Math.min(...floors) : Math.max(...floors);
    const next = Math.max(min, Math.min(count, floor));
    if (next < count) events.push({ at: t, removed: count - next });
    count = next;
    if (count === min) break;
  }
  return events.reduce((n, e) => n + e.removed, 0);
}

test('scale-down removals are linear in the decisions and equal the controller arithmetic written out, over a grid of rules', () => {
  const policySets: ScaleDownRules['policies'][] = [
    [{ type: 'Pods', value: 1, periodSeconds: 60 }],
    [{ type: 'Pods', value: 2, periodSeconds: 15 }],
    [{ type: 'Percent', value: 10, periodSeconds: 45 }],
    [
      { type: 'Pods', value: 1, periodSeconds: 135 },
      { type: 'Percent', value: 50, periodSeconds: 30 },
    ],
    [
      { type: 'Pods', value: 3, periodSeconds: 1800 },
      { type: 'Percent', value: 20, periodSeconds: 15 },
      { type: 'Pods', value: 1, periodSeconds: 15 },
    ],
  ];
  let compared = 0;
  for (const policies of policySets)
    for (const select of ['Max', 'Min'] as const)
      for (const [min, max] of [
        [1, 2],
        [1, 9],
        [3, 40],
        [2, 200],
      ] as const)
        for (const window of [0, 14, 15, 130, 900, 4000]) {
          const r = rules(policies, select);
          assert.equal(
            scaleDownRemovals(min, max, r, window),
            referenceRemovals(min, max, r, window),
            `${JSON.stringify(policies)} ${select} ${min}-${max} in ${window} s`,
          );
          compared++;
        }
  assert.equal(compared, 240);
  // The spec: a 1-pod step from the schema's most replicas down, over the longest sequence a duration allows.
  const onePod = rules([{ type: 'Pods', value: 1, periodSeconds: 15 }]);
  assert.equal(scaleDownRemovals(1, 10_000, onePod, 2_147_483), 9_999);
});

test('replica and node counts have sane upper bounds: a 1 KiB spec cannot ask the planner for a hundred million pods', () => {
  assert.deepEqual(problems(auto({ maxReplicas: 100_000_000, behavior: { scaleDown: { policies: [{ type: 'Pods', value: 1, periodSeconds: 15 }] } } })), [
    'spec.autoscaling.maxReplicas: must be at most 10000, got 100000000',
  ]);
  assert.deepEqual(problems({ replicas: 10_001 }), ['spec.replicas: must be at most 10000, got 10001']);
  assert.deepEqual(problems({ nodes: 5_001 }), ['spec.nodes: must be at most 5000, got 5001']);
  const many = Array.from({ length: 11 }, () => ({ type: 'Pods', value: 1, periodSeconds: 15 }));
  assert.match(
    problems(auto({ maxReplicas: 4, behavior: { scaleDown: { policies: many } } })).join('\n'),
    /spec\.autoscaling\.behavior\.scaleDown\.policies: .*10/,
  );
});

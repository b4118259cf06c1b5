import type { AutoscalingSpec, HpaPolicy } from '../schema/autoscaling';
import type { GatewaySpec } from '../schema/gateway-spec';
import { derived, specInput, type DerivationInput, type Derived, type GivenPaths } from '../model/derived';
import { unavailablePercentFor, type AntiAffinity } from '../model/rollout';
import type { RuleOf } from '../model/finding';
import type { RolloutPlan } from './rollout';
import type { Sequence } from './sequence';
import type { Timings } from './timings';

/*
 * An autoscaled gateway: the HPA owns the replica count, anywhere from minReplicas to maxReplicas.
 * Every scale-down is a pod termination that runs the same sequence, so the plan says how many pods
 * one can take out at once (behavior.scaleDown against the sequence length), and the rollout, the
 * anti-affinity and the PodDisruptionBudget are chosen to hold at every count of the range.
 *
 * Sources (public): Kubernetes pkg/apis/autoscaling/v2/defaults.go (default behavior),
 * pkg/controller/podautoscaler/horizontal.go (calculateScaleDownLimitWithBehaviors: each policy's
 * limit is counted from the replicas at the start of its period; Pods subtracts, Percent keeps
 * floor(count x (1 - value/100)); selectPolicy Max takes the lowest count, Min the highest),
 * kube-controller-manager flags --horizontal-pod-autoscaler-sync-period (15 s) and
 * --horizontal-pod-autoscaler-downscale-stabilization (5 min).
 */

/** kube-controller-manager's --horizontal-pod-autoscaler-sync-period default: one decision per 15 s. */
export const HPA_SYNC_PERIOD_SECONDS = 15;
/** kube-controller-manager's --horizontal-pod-autoscaler-downscale-stabilization default (5m). */
export const HPA_DOWNSCALE_STABILIZATION_SECONDS = 300;
/** Kubernetes' default scale-down policy (autoscaling/v2 defaults.go): 100 percent per 15 s. */
export const HPA_DEFAULT_SCALE_DOWN_POLICIES: readonly HpaPolicy[] = [{ type: 'Percent', value: 100, periodSeconds: 15 }];

/** The scale-down rules the HPA applies, each with where it came from. */
export type ScaleDownRules = {
  stabilizationWindowSeconds: number;
  selectPolicy: 'Max' | 'Min' | 'Disabled';
  policies: HpaPolicy[];
  sources: { stabilizationWindowSeconds: string; selectPolicy: string; policies: string };
};

export type Scaling =
  | { mode: 'fixed'; replicas: number }
  | {
      mode: 'autoscaled';
      minReplicas: number;
      maxReplicas: number;
      /** As given in the spec; absent: the chart's value or Kubernetes' 80. */
      targetCPUUtilizationPercentage?: number;
      /** The HPA's behavior as the spec gives it (written into the HPA as is). */
      behavior?: AutoscalingSpec['behavior'];
      /** The scale-down rules in force, defaults filled in. */
      scaleDown: ScaleDownRules;
      /** Pods one HPA decision can take out at the same instant: they leave the LB together. */
      scaleDownPodsPerStep: Derived;
      /** Pods whose terminations can overlap: every decision within one sequence. */
      scaleDownPodsAtOnce: Derived;
    };

export function scaleDownRules(a: AutoscalingSpec, given: GivenPaths): ScaleDownRules {
  const d = a.behavior?.scaleDown;
  const path = 'spec.autoscaling.behavior.scaleDown';
  const from = (key: string, fallback: string) => (given.has(`${path}.${key}`) ? `${path}.${key}` : `default: ${fallback}`);
  return {
    stabilizationWindowSeconds: d?.stabilizationWindowSeconds ?? HPA_DOWNSCALE_STABILIZATION_SECONDS,
    selectPolicy: d?.selectPolicy ?? 'Max',
    policies: d?.policies ? d.policies.map((p) => ({ ...p })) : HPA_DEFAULT_SCALE_DOWN_POLICIES.map((p) => ({ ...p })),
    sources: {
      stabilizationWindowSeconds: from(
        'stabilizationWindowSeconds',
        "kube-controller-manager --horizontal-pod-autoscaler-downscale-stabilization 5m (unless your cluster's controller manager sets another)",
      ),
      selectPolicy: from('selectPolicy', 'Kubernetes autoscaling/v2 Max'),
      policies: from('policies', 'Kubernetes autoscaling/v2 100 Percent per 15 s'),
    },
  };
}

/** The lowest count one policy lets the HPA go to, counted from the replicas at its period's start. */
function policyFloor(policy: HpaPolicy, periodStart: number): number {
  return policy.type === 'Pods' ? periodStart - policy.value : Math.floor(periodStart * (1 - policy.value / 100));
}

/**
 * Pods removed by the HPA's decisions in [0, windowSeconds), starting at maxReplicas with the load
 * as low as it gets (every decision goes as far as the rules allow, never below minReplicas): the
 * controller's own arithmetic, one decision per sync period. Linear in the decisions: each policy
 * keeps the pods removed within its period as a running sum over a window of the decisions, which
 * only moves forward (a spec of a few bytes can ask for millions of decisions: maxReplicas and the
 * sequence's length are bounded by the schema, and a 1-pod step must not cost their product squared).
 */
export function scaleDownRemovals(min: number, max: number, rules: ScaleDownRules, windowSeconds: number): number {
  if (rules.selectPolicy === 'Disabled') return 0;
  const events: Array<{ at: number; removed: number }> = [];
  // Per policy: the first decision still inside its period, and the pods removed from there on.
  const windows = rules.policies.map(() => ({ first: 0, removed: 0 }));
  let count = max;
  let total = 0;
  for (let t = 0; t < windowSeconds || t === 0; t += HPA_SYNC_PERIOD_SECONDS) {
    const floors = rules.policies.map((p, i) => {
      const w = windows[i]!;
      while (w.first < events.length && events[w.first]!.at + p.periodSeconds <= t) w.removed -= events[w.first++]!.removed;
      return policyFloor(p, count + w.removed);
    });
    // Max picks the biggest change (the lowest count), Min the smallest.
    const floor = rules.selectPolicy === 'Max' ? Math.min(...floors) : Math.max(...floors);
    const next = Math.max(min, Math.min(count, floor));
    if (next < count) {
      events.push({ at: t, removed: count - next });
      for (const w of windows) w.removed += count - next;
      total += count - next;
    }
    count = next;
    if (count === min) break;
  }
  return total;
}

function rulesInputs(a: AutoscalingSpec, rules: ScaleDownRules, given: GivenPaths): Record<string, DerivationInput> {
  return {
    maxReplicas: specInput(given, 'spec.autoscaling.maxReplicas', a.maxReplicas, ''),
    minReplicas: specInput(given, 'spec.autoscaling.minReplicas', a.minReplicas, "1 (Kubernetes' and istio/gateway's default)"),
    policies: { value: rules.policies.map((p) => `${p.value} ${p.type} per ${p.periodSeconds} s`).join(', '), source: rules.sources.policies },
    selectPolicy: { value: rules.selectPolicy, source: rules.sources.selectPolicy },
    hpaSyncPeriod: { value: HPA_SYNC_PERIOD_SECONDS, source: 'default: kube-controller-manager --horizontal-pod-autoscaler-sync-period 15 s' },
  };
}

/** The scaling part of the plan: a fixed count, or the HPA's range and what its scale-downs do. */
export function planScaling(spec: GatewaySpec, timings: Timings, given: GivenPaths): Scaling {
  const a = spec.spec.autoscaling;
  if (!a) return { mode: 'fixed', replicas: spec.spec.replicas! };
  const rules = scaleDownRules(a, given);
  const inputs = rulesInputs(a, rules, given);
  const perStep = derived(
    scaleDownRemovals(a.minReplicas, a.maxReplicas, rules, 0),
    "pods one HPA decision removes from maxReplicas with the load at its lowest: the policies' limits from the count at each period's start (Pods: count - value; Percent: floor(count x (1 - value/100))), combined by selectPolicy, never below minReplicas",
    inputs,
    'count',
  );
  const atOnce = derived(
    scaleDownRemovals(a.minReplicas, a.maxReplicas, rules, timings.sequenceSeconds),
    'pods removed by the HPA decisions (one per sync period) within one sequence after the first, from maxReplicas with the load at its lowest: their terminations overlap',
    {
      ...inputs,
      sequenceSeconds: { value: timings.sequenceSeconds, source: 'plan: drainTimeoutSeconds + lbBufferSeconds, one termination' },
    },
    'count',
  );
  return {
    mode: 'autoscaled',
    minReplicas: a.minReplicas,
    maxReplicas: a.maxReplicas,
    ...(a.targetCPUUtilizationPercentage !== undefined ? { targetCPUUtilizationPercentage: a.targetCPUUtilizationPercentage } : {}),
    ...(a.behavior !== undefined ? { behavior: structuredClone(a.behavior) } : {}),
    scaleDown: rules,
    scaleDownPodsPerStep: perStep,
    scaleDownPodsAtOnce: atOnce,
  };
}

/**
 * Strategy, anti-affinity and PodDisruptionBudget that hold at every count from minReplicas to
 * maxReplicas; the rollout rules (src/model/rollout.ts) say where the spec makes some count a trap.
 */
export function planAutoscaledRollout(spec: GatewaySpec, a: AutoscalingSpec): RolloutPlan {
  const { nodes, health, rollout } = spec.spec;
  const { maxReplicas: max } = a;
  const hostPort = health.exposure === 'hostPort';
  const why = hostPort ? 'hostPort' : 'required anti-affinity';

  // Required while every count fits one pod per node; one node only: a surge pod must share it.
  const antiAffinity: AntiAffinity = rollout.antiAffinity ?? (hostPort || (nodes >= max && nodes >= 2) ? 'required' : 'preferred');
  const onePodPerNode = hostPort || antiAffinity === 'required';

  let maxSurge: number;
  let maxUnavailable: number | `${number}%`;
  let reason: string;
  const overridden = rollout.maxSurge !== undefined || rollout.maxUnavailable !== undefined;
  if (overridden) {
    maxSurge = rollout.maxSurge ?? (rollout.maxUnavailable === 0 ? 1 : 0);
    maxUnavailable = rollout.maxUnavailable ?? (maxSurge === 0 ? 1 : 0);
    reason = 'spec.rollout overrides, checked at every count from minReplicas to maxReplicas';
  } else if (onePodPerNode && nodes <= max && nodes >= 2) {
    maxSurge = 1;
    maxUnavailable = unavailablePercentFor(nodes);
    reason = `one pod per node (${why}) and the HPA may fill all ${nodes} nodes (up to ${max} replicas): maxUnavailable ${maxUnavailable} resolves at the current count, to 0 while a node is spare (surge one pod, keep full capacity) and to 1 at ${nodes} replicas (one old pod leaves first, its node takes the new one)`;
  } else if (onePodPerNode && nodes < 2) {
    maxSurge = 0;
    maxUnavailable = 1;
    reason = `one pod per node (${why}) on one node: replace in place`;
  } else {
    maxSurge = 1;
    maxUnavailable = 0;
    reason = onePodPerNode
      ? `a spare node at every count (${nodes} nodes, at most ${max} replicas): surge one pod first, keep full capacity`
      : 'pods may share nodes: surge one pod first, keep full capacity, at every count';
  }

  return {
    maxSurge,
    maxUnavailable,
    antiAffinity,
    onePodPerNode,
    // One pod at a time at every count; at one replica it allows that pod's eviction, so a node
    // drain never blocks (the HPA's own scale-downs delete pods directly: a PDB does not limit them).
    pdbMaxUnavailable: max >= 2 ? 1 : null,
    reason,
  };
}

/** One HPA decision's and one sequence's worth of scale-downs, in words, for the two findings that say them. */
function scaleDownWords(scaling: Extract<Scaling, { mode: 'autoscaled' }>, t: Timings): { capacity: string; oneAtATime: string } {
  const { maxReplicas: max, scaleDown: rules } = scaling;
  const perStep = scaling.scaleDownPodsPerStep.value;
  const atOnce = scaling.scaleDownPodsAtOnce.value;
  const period = Math.min(1800, Math.ceil(t.sequenceSeconds));
  const remaining = max - atOnce;
  return {
    oneAtATime: `give spec.autoscaling.behavior.scaleDown.policies [{type: Pods, value: 1, periodSeconds: ${period}}] (one pod per sequence)`,
    capacity: `from ${max} replicas, one HPA decision removes ${perStep} pod(s), which run their sequences side by side and leave the LB within the same lbBufferSeconds (${t.lbBufferSeconds} s), and the decisions within one sequence (${t.sequenceSeconds} s) remove ${atOnce}, which drain at the same time: new requests go to the other ${remaining} at once, not pod by pod (${Math.round((100 * atOnce) / max)} % of the pods stop taking new requests within one sequence). The HPA makes such a step only after its recommendation stayed that low for ${rules.stabilizationWindowSeconds} s (stabilization window), so it judged ${remaining} pod(s) enough; in-flight requests finish on the leaving pods`,
  };
}

/** What the scale-down rules read of a plan (the whole of it is plan-context.ts's PlanContext). */
export type ScalingRuleContext = { spec: GatewaySpec; scaling: Scaling; timings: Timings; sequence: Sequence };

/** An autoscaled plan's scaling, or undefined for a fixed count. */
const autoscaled = (ctx: ScalingRuleContext) => (ctx.scaling.mode === 'autoscaled' ? ctx.scaling : undefined);

/** How a scale-down takes pods out, in numbers, for the findings and PLAN.md. */
export const SCALE_DOWN_RULES: readonly RuleOf<ScalingRuleContext>[] = [
  {
    id: 'autoscale-drain-first-overlap',
    severity: 'warning',
    field: 'spec.autoscaling.behavior.scaleDown',
    check: (ctx) => {
      const scaling = autoscaled(ctx);
      if (!scaling || scaling.scaleDownPodsAtOnce.value < 2 || ctx.sequence !== 'drain-first') return undefined;
      const { capacity, oneAtATime } = scaleDownWords(scaling, ctx.timings);
      return {
        message: `a scale-down drains several pods at once with drain-first: ${capacity}. Each leaving pod refuses new connections until the LB marks it DOWN, and the LB re-sends a refused connection to a backend still UP, which can be another leaving pod: that connection fails after the LB's retries`,
        remediation: `${oneAtATime}, or an LB setting that stops sending before the drain (soft-drain or health-first)`,
        expectedLoss: 'refused-connections',
      };
    },
  },
  {
    id: 'autoscale-pods-leave-together',
    severity: 'info',
    field: 'spec.autoscaling.behavior.scaleDown',
    check: (ctx) => {
      const scaling = autoscaled(ctx);
      if (!scaling || scaling.scaleDownPodsAtOnce.value < 2 || ctx.sequence === 'drain-first') return undefined;
      const { capacity, oneAtATime } = scaleDownWords(scaling, ctx.timings);
      return {
        message: `a scale-down takes several pods out of the LB together: ${capacity}`,
        remediation: `nothing is lost; to take pods out one at a time instead, ${oneAtATime}`,
      };
    },
  },
  {
    id: 'autoscale-scale-down-window-short',
    severity: 'info',
    field: 'spec.autoscaling.behavior.scaleDown.stabilizationWindowSeconds',
    check: ({ spec, scaling, timings: t }) => {
      const given = spec.spec.autoscaling?.behavior?.scaleDown?.stabilizationWindowSeconds;
      return scaling.mode === 'autoscaled' && given !== undefined && given < t.sequenceSeconds
        ? {
            message: `a scale-down stabilization window of ${given} s is shorter than one termination (${t.sequenceSeconds} s): a dip in load shorter than a drain already removes pods, which then drain for up to ${t.sequenceSeconds} s while any scale-up pod waits minReadySeconds (${t.minReadySeconds} s) before the LB sends it traffic`,
            remediation: `use stabilizationWindowSeconds ${Math.ceil(t.sequenceSeconds)} or more, or omit it (300 s)`,
          }
        : undefined;
    },
  },
];

import type { HealthSpec, ObservabilitySpec } from '../schema/gateway-spec';
import type { ResolvedSpec } from '../schema/parse-spec';
import type { Derived } from './derived';
import { findTraps } from './findings';
import { SEVERITY_RANK, type Finding } from './finding';
import { lbBehaviour, type LoadBalancerSpec } from '../lb/registry';
import type { LbBehaviour } from './lb-behaviour';
import { planRollout, type RolloutPlan } from './rollout';
import { chooseSequence, type Sequence } from './sequence';
import { buildTimeline, type Timeline } from './timeline';
import { checkTimingBounds } from './timing-bounds';
import { computeTimings, timingValues, type TimingDerivations, type Timings } from './timings';

export const PLAN_API_VERSION = 'gracegate.dev/v1alpha1';

/** The LB as the plan reasons about it, and the vendor's own settings (defaults applied) it was planned from. */
export type PlannedLoadBalancer = Omit<LbBehaviour, 'detect' | 'recover'> & {
  lbDetectSeconds: number;
  lbRecoverSeconds: number;
  settings: LoadBalancerSpec;
};

/**
 * Everything the emitters and the sidecar need, decided once. Pure data: safe to serialise. The
 * consumers (pod changes, lb-config, PLAN.md) read the plan alone, never the spec it came from.
 */
export type Plan = {
  apiVersion: typeof PLAN_API_VERSION;
  kind: 'GracefulGatewayPlan';
  gateway: { name: string; namespace: string };
  /** The replica count the rollout, the PDB and the Deployment are planned for (spec.replicas). */
  replicas: number;
  /** The sidecar's ports and how the LB reaches them (spec.health, defaults applied). */
  health: HealthSpec;
  /** How Prometheus reads the sidecars (spec.observability, defaults applied). */
  observability: ObservabilitySpec;
  /** The proxy container the sequence holds and drains (spec.envoy). */
  proxy: { containerName: string; adminPort: number };
  sequence: Sequence;
  sequenceReason: string;
  loadBalancer: PlannedLoadBalancer;
  timings: Timings;
  derivations: TimingDerivations;
  rollout: Omit<RolloutPlan, 'findings'>;
  timeline: Timeline;
  findings: Finding[];
};

/**
 * Plans the termination of one gateway: normalise the LB, choose the sequence, compute every
 * timing with its derivation, the rollout, the timeline and the findings. Pure: no I/O.
 */
export function planGateway({ spec, given }: ResolvedSpec): Plan {
  const lb = lbBehaviour(spec.spec.loadBalancer, given);
  const { sequence, reason } = chooseSequence(lb);
  const derivations = computeTimings(spec, lb, given);
  checkTimingBounds(derivations);
  const timings = timingValues(derivations);
  const { findings: rolloutFindings, ...rollout } = planRollout(spec);
  const findings = [...findTraps({ spec, lb, sequence, timings }), ...rolloutFindings]
    .sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity]);
  const { detect, recover, ...lbRest } = lb;
  return {
    apiVersion: PLAN_API_VERSION,
    kind: 'GracefulGatewayPlan',
    gateway: { name: spec.metadata.name, namespace: spec.metadata.namespace },
    replicas: spec.spec.replicas,
    health: spec.spec.health,
    observability: spec.spec.observability,
    proxy: { containerName: spec.spec.envoy.containerName, adminPort: spec.spec.envoy.adminPort },
    sequence,
    sequenceReason: reason,
    loadBalancer: { ...lbRest, lbDetectSeconds: detect.value, lbRecoverSeconds: recover.value, settings: spec.spec.loadBalancer },
    timings,
    derivations,
    rollout,
    timeline: buildTimeline(sequence, lb, timings),
    findings,
  };
}

export type { Derived };

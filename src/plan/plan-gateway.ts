import type { ResolvedSpec } from '../spec/parse-spec';
import type { Derived } from './derived';
import { findTraps } from './findings';
import { SEVERITY_RANK, type Finding } from './finding';
import { lbBehaviour } from './lb';
import type { LbBehaviour } from './lb-behaviour';
import { planRollout, type RolloutPlan } from './rollout';
import { chooseSequence, type Sequence } from './sequence';
import { buildTimeline, type Timeline } from './timeline';
import { checkTimingBounds } from './timing-bounds';
import { computeTimings, timingValues, type TimingDerivations, type Timings } from './timings';

export const PLAN_API_VERSION = 'gracegate.dev/v1alpha1';

/** Everything the emitters and the sidecar need, decided once. Pure data: safe to serialise. */
export type Plan = {
  apiVersion: typeof PLAN_API_VERSION;
  kind: 'GracefulGatewayPlan';
  gateway: { name: string; namespace: string };
  sequence: Sequence;
  sequenceReason: string;
  loadBalancer: Omit<LbBehaviour, 'detect' | 'recover'> & { lbDetectSeconds: number; lbRecoverSeconds: number };
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
  const findings = [...findTraps(spec, lb, sequence, timings), ...rolloutFindings]
    .sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity]);
  const { detect, recover, ...lbRest } = lb;
  return {
    apiVersion: PLAN_API_VERSION,
    kind: 'GracefulGatewayPlan',
    gateway: { name: spec.metadata.name, namespace: spec.metadata.namespace },
    sequence,
    sequenceReason: reason,
    loadBalancer: { ...lbRest, lbDetectSeconds: detect.value, lbRecoverSeconds: recover.value },
    timings,
    derivations,
    rollout,
    timeline: buildTimeline(sequence, lb, timings),
    findings,
  };
}

export type { Derived };

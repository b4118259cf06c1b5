import type { ChartSpec } from '../schema/chart';
import type { FixedReplicasSpec, HealthSpec, KubeProxySpec, NetworkPolicySpec, ObservabilitySpec } from '../schema/gateway-spec';
import type { ResolvedSpec } from '../schema/parse-spec';
import type { Derived } from '../model/derived';
import { gatewayFindings } from './findings';
import { SEVERITY_RANK, type Finding } from '../model/finding';
import { lbBehaviour, type LoadBalancerSpec } from '../lb/registry';
import { gatewayRolloutCheck, planRollout, type RolloutPlan } from './rollout';
import { planAutoscaledRollout, planScaling, type Scaling } from './scaling';
import type { Sequence } from './sequence';
import {
  assumedTraffic,
  chooseOrder,
  chosenOrder,
  lbAlternatives,
  LOSSLESS_BELOW,
  ownLoss,
  type AssumedTraffic,
  type LbAlternative,
  type OrderCost,
} from './order-choice';
import { buildTimeline, type Timeline } from './timeline';
import { planHcSidecar, type HcSidecarPlan } from './hc-sidecar';
import { healthProbeOf, type HealthProbePlan } from './start-half';
import { checkTimingBounds } from './timing-bounds';
import { computeTimings, orderTimings, timingValues, type TimingDerivations, type Timings } from './timings';
import { SANE_GRACE_PERIOD_SECONDS } from '../model/grace-period';
import { planLongLived, streamWait, type LongLivedPlan } from './long-lived';
import type { GatewaySpec } from '../schema/gateway-spec';
import type { GivenPaths } from '../model/derived';
import type { LbBehaviour } from '../model/lb-behaviour';

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
  /** The fixed replica count (spec.replicas); null when an HPA owns the count (see `scaling`). */
  replicas: number | null;
  /** A fixed count, or the HPA's range and what its scale-downs do (spec.autoscaling). */
  scaling: Scaling;
  /** What deploys the gateway pods, and so how the pod changes are delivered (spec.chart). */
  chart: ChartSpec;
  /** The sidecar's ports and how the LB reaches them (spec.health, defaults applied). */
  health: HealthSpec;
  /** Where the LB's probe enters the pod: the gateway's own Service, a health Service of its own, a hostPort, or the LB's own way (src/plan/start-half.ts). */
  healthProbe: HealthProbePlan;
  /** kube-proxy's sync path on the nodes (spec.kubeProxy, defaults applied): the start half's rule times. */
  kubeProxy: KubeProxySpec;
  /** How Prometheus reads the sidecars (spec.observability, defaults applied). */
  observability: ObservabilitySpec;
  /** Who the gateway pods' NetworkPolicy admits to the sidecar's ports (spec.networkPolicy, defaults applied). */
  networkPolicy: NetworkPolicySpec;
  /** The proxy container the sequence holds and drains (spec.envoy). */
  proxy: { containerName: string; adminPort: number };
  /** How the hc sidecar runs: a native sidecar (init container, restartPolicy Always) or an ordinary container. */
  hcSidecar: HcSidecarPlan;
  /** The pod's image pull Secrets (spec.imagePullSecrets), by name. */
  imagePullSecrets: string[];
  sequence: Sequence;
  sequenceReason: string;
  /**
   * Each gracegate order with the requests one pod termination is expected to lose under `traffic`
   * (src/plan/order-choice.ts): the plan's sequence is the least.
   */
  orders: OrderCost[];
  /** The traffic the expected losses are computed for, with where each number comes from. */
  traffic: AssumedTraffic;
  /** The fact of the LB that is not known and would change the choice, if one would. */
  decidingUnknown?: string;
  /**
   * Where the chosen order is expected to lose requests: each LB setting the vendor offers that
   * lowers the loss, with the order and loss it leads to (lb-config prints them as options).
   */
  lbOptions: LbAlternative[];
  loadBalancer: PlannedLoadBalancer;
  timings: Timings;
  derivations: TimingDerivations;
  rollout: RolloutPlan;
  timeline: Timeline;
  /** How long-lived streams end (spec.traffic.longLived); null without it. */
  longLived: LongLivedPlan | null;
  findings: Finding[];
};

/**
 * Plans the termination of one gateway: normalise the LB, choose the sequence, compute every
 * timing with its derivation, the rollout, the timeline and the findings. Pure: no I/O.
 */
export function planGateway({ spec, given }: ResolvedSpec): Plan {
  const lb = lbBehaviour(spec.spec.loadBalancer, given);
  const planned = { ...lb, lbDetectSeconds: lb.detect.value };
  const byOrder = new Map<Sequence, ReturnType<typeof timingsWithStreams>>();
  const timingsOf = (order: Sequence) => {
    if (!byOrder.has(order)) byOrder.set(order, timingsWithStreams(spec, lb, given, order));
    return byOrder.get(order)!;
  };
  // The traffic reads spec.traffic alone: once for the choice and every LB alternative.
  const traffic = assumedTraffic(spec);
  const choice = chooseOrder(spec, planned, (order) => orderTimings(timingsOf(order).derivations), traffic);
  const sequence = choice.sequence;
  const { derivations, longLived } = timingsOf(sequence);
  checkTimingBounds(derivations);
  const timings = timingValues(derivations);
  const healthProbe = healthProbeOf(spec.spec.health, lb, sequence, timings.drainTimeoutSeconds, timings.lbBufferSeconds);
  const autoscaling = spec.spec.autoscaling;
  const rollout = autoscaling ? planAutoscaledRollout(spec, autoscaling) : planRollout(spec as FixedReplicasSpec);
  const hcSidecar = planHcSidecar(spec);
  const scaling = planScaling(spec, timings, given);
  let alternatives: LbAlternative[] | undefined;
  const findings = gatewayFindings({
    spec,
    lb,
    sequence,
    timings,
    healthProbe,
    rollout,
    rolloutCheck: gatewayRolloutCheck(spec, rollout),
    scaling,
    longLived,
    orders: choice.orders,
    traffic: choice.traffic,
    alternatives: () => {
      alternatives ??= lbAlternatives(spec, given, traffic);
      return alternatives;
    },
  }).sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity]);
  const chosen = chosenOrder(choice);
  const lbOptions =
    ownLoss(chosen) >= LOSSLESS_BELOW ? (alternatives ?? lbAlternatives(spec, given, traffic)).filter((a) => a.own < ownLoss(chosen) - LOSSLESS_BELOW) : [];
  const { detect, recover, ...lbRest } = lb;
  return {
    apiVersion: PLAN_API_VERSION,
    kind: 'GracefulGatewayPlan',
    gateway: { name: spec.metadata.name, namespace: spec.metadata.namespace },
    replicas: spec.spec.replicas ?? null,
    scaling,
    chart: spec.spec.chart,
    health: spec.spec.health,
    healthProbe,
    kubeProxy: spec.spec.kubeProxy,
    observability: spec.spec.observability,
    networkPolicy: spec.spec.networkPolicy,
    proxy: { containerName: spec.spec.envoy.containerName, adminPort: spec.spec.envoy.adminPort },
    hcSidecar,
    imagePullSecrets: spec.spec.imagePullSecrets,
    sequence,
    sequenceReason: choice.reason,
    orders: choice.orders,
    traffic: choice.traffic,
    ...(choice.decidingUnknown ? { decidingUnknown: choice.decidingUnknown } : {}),
    lbOptions,
    loadBalancer: { ...lbRest, lbDetectSeconds: detect.value, lbRecoverSeconds: recover.value, settings: spec.spec.loadBalancer },
    timings,
    derivations,
    rollout,
    timeline: buildTimeline(sequence, lb, timings, hcSidecar.kind),
    longLived,
    findings,
  };
}

/**
 * The timings, with the drain timeout covering the long-lived streams' rotation where the grace
 * period can hold it (terminationGracePeriodSeconds at most SANE_GRACE_PERIOD_SECONDS), and the
 * largest lifetime bound that fits. The grace period grows one for one with the drain timeout, so
 * the fitting bound is found from one extra computation and checked.
 */
function timingsWithStreams(
  spec: GatewaySpec,
  lb: LbBehaviour,
  given: GivenPaths,
  sequence: Sequence,
): { derivations: TimingDerivations; longLived: LongLivedPlan | null } {
  const base = computeTimings(spec, lb, given, sequence);
  const ll = spec.spec.traffic.longLived;
  if (!ll) return { derivations: base, longLived: null };
  const poll = spec.spec.drain.pollInterval;
  const graceWith = (lifetime: number) => computeTimings(spec, lb, given, sequence, streamWait(lifetime, poll, given)).terminationGracePeriodSeconds.value;
  const baseGrace = base.terminationGracePeriodSeconds.value;
  // Start from the lifetime whose wait equals the drain timeout, add the grace left, then step down until it fits.
  let fitting = Math.floor(base.drainTimeoutSeconds.value - Math.ceil(2 * poll) + (SANE_GRACE_PERIOD_SECONDS - baseGrace));
  for (let i = 0; i < 5 && fitting > 0 && graceWith(fitting) > SANE_GRACE_PERIOD_SECONDS; i++) fitting--;
  if (fitting < 0 || (fitting > 0 && graceWith(fitting) > SANE_GRACE_PERIOD_SECONDS)) fitting = 0;
  let derivations = base;
  let waitCovered = false;
  if (ll.maxStreamLifetimeSeconds !== undefined) {
    const wait = streamWait(ll.maxStreamLifetimeSeconds, poll, given);
    const extended = computeTimings(spec, lb, given, sequence, wait);
    if (extended.drainTimeoutSeconds.value >= wait.value && extended.terminationGracePeriodSeconds.value <= SANE_GRACE_PERIOD_SECONDS) {
      derivations = extended;
      waitCovered = true;
    }
  }
  return { derivations, longLived: planLongLived(ll, spec, given, { waitCovered, maxFittingLifetimeSeconds: fitting }) };
}

export type { Derived };

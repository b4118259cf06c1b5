/**
 * The order with the least loss: each order the LB allows, with the requests one pod termination is
 * expected to lose under the spec's traffic, by the same model `gracegate simulate` runs (its
 * closed form, src/loss/expected.ts). The plan takes the least; where a fact of the LB is not known
 * (src/lb/<vendor>/behaviour.ts says which), it takes the order whose worst case is least and names
 * the fact that would change the choice. Pure.
 */
import { SEQUENCES, type Sequence } from '../contract/hc';
import { MAX_REQUEST_MS, parseDurationDist, type DurationDist } from '../loss/duration-dist';
import { expectedLoss } from '../loss/expected';
import { lbInputs, podInputs, type LossLb, type LossTimings } from '../loss/inputs';
import { idleConnectionsAtClose, type Fate } from '../loss/model';
import type { GatewaySpec } from '../schema/gateway-spec';
import { DEFAULT_TRAFFIC } from '../schema/gateway-spec';
import { computeTimings, longestRequestSeconds, orderTimings } from './timings';
import type { StartPath } from '../loss/start-model';
import { applyFix, type Fix } from '../core/fix';
import type { GivenPaths } from '../model/derived';
import type { RefusedConnection } from '../model/lb-behaviour';
import { lbBehaviour, loadBalancerSchema, vendorFixes, type LoadBalancerSpec } from '../lb/registry';

/** Below this many requests per termination an order counts as lossless (it rounds to 0.00). */
export const LOSSLESS_BELOW = 0.005;

/** The traffic the expected losses are computed for, each number with where it comes from. */
export type AssumedTraffic = {
  requestsPerSecondPerPod: number;
  requestsPerSecondSource: string;
  requestDurations: string;
  requestDurationsSource: string;
  /** LB-to-pod connect, ms: spec.traffic.lbToPodRoundTripMs. */
  connectMs: number;
};

export type OrderCost = {
  order: Sequence;
  /** Whether the LB lets the pod run it (soft-drain needs a graceful signal the LB's probe reads). */
  runnable: boolean;
  /** Why not, where not. */
  notRunnable?: string;
  /** Expected requests lost per pod termination (the worst case where a fact is not known). */
  expected: number;
  byFate: Record<Fate, number>;
  /** Of `expected`, requests that outlast the drain timeout: every order loses them. */
  beyondDrainTimeout: number;
  /** Where a fact of the LB is not known: the loss if it is the better value. */
  ifKnownBetter?: number;
  /** The timings this order runs with (drain-first behind reused connections waits for two requests). */
  timings: LossTimings;
  /** How long the sidecar holds a new pod's first 200 with this order's health probe (the start half, src/plan/start-half.ts). */
  startHoldSeconds: number;
  /** How that probe reaches a new pod, against the traffic's path (the same derivation's). */
  startPath: StartPath;
};

type OrderChoice = {
  sequence: Sequence;
  reason: string;
  traffic: AssumedTraffic;
  /** Every gracegate order, in SEQUENCES' order. */
  orders: OrderCost[];
  /** The not-known fact that would change the choice, if one would. */
  decidingUnknown?: string;
};

/** The assumed traffic with its parsed durations: what the model runs on. */
type ModelTraffic = AssumedTraffic & { durations: DurationDist };

/**
 * The traffic the plan assumes: the spec's, or the documented defaults. It reads spec.traffic
 * alone, so planGateway computes it once for the choice and every LB alternative (whose fixes edit
 * spec.loadBalancer only).
 */
export function assumedTraffic(spec: GatewaySpec): ModelTraffic {
  const t = spec.spec.traffic;
  // The default: log-normal through the spec's p99, none longer than the longest request the drain
  // timeout is made for (ceil(1.2 x p99), src/plan/timings.ts); the model follows no request past
  // MAX_REQUEST_MS, so a longer p99 is taken at that.
  const p99ms = Math.min(MAX_REQUEST_MS, Math.round(t.longRequestP99Seconds * 1000));
  const longest = Math.min(MAX_REQUEST_MS, longestRequestSeconds(t.longRequestP99Seconds) * 1000);
  const p50ms = Math.max(1, Math.min(p99ms - 1, Math.round(p99ms / DEFAULT_TRAFFIC.p50Divisor)));
  const text = t.requestDurations ?? `lognormal:p50=${p50ms}ms,p99=${p99ms}ms,max=${Math.max(longest, p99ms)}ms`;
  const durations = parseDurationDist(text);
  return {
    requestsPerSecondPerPod: t.requestsPerSecondPerPod ?? DEFAULT_TRAFFIC.requestsPerSecondPerPod,
    requestsPerSecondSource:
      t.requestsPerSecondPerPod !== undefined
        ? 'spec.traffic.requestsPerSecondPerPod'
        : `default ${DEFAULT_TRAFFIC.requestsPerSecondPerPod} (docs/simulate.md)`,
    requestDurations: durations.text,
    requestDurationsSource:
      t.requestDurations !== undefined
        ? 'spec.traffic.requestDurations'
        : `default: log-normal through p50 = longRequestP99Seconds / ${DEFAULT_TRAFFIC.p50Divisor} and p99 = longRequestP99Seconds, none longer than ceil(1.2 x longRequestP99Seconds) (docs/simulate.md)`,
    connectMs: t.lbToPodRoundTripMs,
    durations,
  };
}

/** Preference where two orders cost the same: the one that relies on fewer facts of the LB. */
const TIE_ORDER: Record<Sequence, number> = { 'soft-drain': 0, 'health-first': 1, 'drain-first': 2 };

// The model's traffic is the LB's over its pods; only the rate per pod matters.
const MODEL_PODS = 2;

/** The idle connections at the pod's close under `traffic`: the same for every order. */
function idleAtCloseOf(traffic: ModelTraffic): number {
  return idleConnectionsAtClose({ kind: 'poisson', rps: traffic.requestsPerSecondPerPod * MODEL_PODS }, traffic.durations, MODEL_PODS, traffic.connectMs);
}

/** The expected loss of `order` behind `lb` with `timings`, for one value of a not-known refusal. */
function orderLoss(lb: LossLb, order: Sequence, timings: LossTimings, traffic: ModelTraffic, idleAtClose: number, resentUnknown = false) {
  return expectedLoss({
    pods: MODEL_PODS,
    rps: traffic.requestsPerSecondPerPod * MODEL_PODS,
    lb: lbInputs(lb, order, traffic.connectMs, resentUnknown),
    pod: podInputs(timings),
    order,
    durations: traffic.durations,
    idleAtClose,
  });
}

/** The chosen order's cost: the entry of `orders` for `sequence` (a plan, a choice, a rule's context). */
export function chosenOrder({ orders, sequence }: { orders: readonly OrderCost[]; sequence: Sequence }): OrderCost {
  return orders.find((o) => o.order === sequence)!;
}

/** What an order itself costs: its expected loss without the requests longer than the drain timeout, which every order loses. */
export function ownLoss(o: Pick<OrderCost, 'expected' | 'beyondDrainTimeout'>): number {
  return Math.max(0, o.expected - o.beyondDrainTimeout);
}

/** An expected count of requests, as the plan and its projections print it: whole from 100, two decimals below. */
export function lossText(n: number): string {
  return n >= 100 ? String(Math.round(n)) : n.toFixed(2);
}
const num = lossText;

/**
 * The causes of a loss that count, by count (a fate of `byFate`, or another count the caller adds):
 * each at or above LOSSLESS_BELOW, in `labels`' order, worded by its label from the count as
 * lossText prints it. Each caller keeps its own words.
 */
export function fateParts<K extends string>(byFate: Record<K, number>, labels: ReadonlyArray<readonly [K, (count: string) => string]>): string[] {
  return labels.filter(([k]) => byFate[k] >= LOSSLESS_BELOW).map(([k, word]) => word(lossText(byFate[k])));
}

/**
 * Each order's cost and the choice under `traffic` (assumedTraffic of the spec). `timingsFor` gives
 * the plan's timings as they would be for an order (drain-first behind connection reuse waits for
 * two requests).
 */
export function chooseOrder(
  spec: GatewaySpec,
  lb: LossLb,
  timingsFor: (order: Sequence) => LossTimings & { startHoldSeconds: number; startPath: StartPath },
  traffic: ModelTraffic,
): OrderChoice {
  const idleAtClose = idleAtCloseOf(traffic);
  const signal = lb.gracefulSignal !== undefined && lb.probeReachesSidecar;
  const unknown = lb.refused.value === 'not-known';
  const orders: OrderCost[] = SEQUENCES.map((order) => {
    const timings = timingsFor(order);
    const worst = [
      orderLoss(lb, order, timings, traffic, idleAtClose, false),
      ...(unknown ? [orderLoss(lb, order, timings, traffic, idleAtClose, true)] : []),
    ].sort((a, b) => b.lost - a.lost);
    const cost: OrderCost = {
      order,
      runnable: order !== 'soft-drain' || signal,
      expected: worst[0]!.lost,
      byFate: worst[0]!.byFate,
      beyondDrainTimeout: worst[0]!.beyondDrainTimeout,
      timings: {
        drainTimeoutSeconds: timings.drainTimeoutSeconds,
        lbBufferSeconds: timings.lbBufferSeconds,
        pollIntervalSeconds: timings.pollIntervalSeconds,
        terminationDrainDurationSeconds: timings.terminationDrainDurationSeconds,
      },
      startHoldSeconds: timings.startHoldSeconds,
      startPath: timings.startPath,
      ...(worst.length > 1 && worst[1]!.lost < worst[0]!.lost - LOSSLESS_BELOW ? { ifKnownBetter: worst[1]!.lost } : {}),
    };
    if (!cost.runnable)
      cost.notRunnable =
        lb.gracefulSignal === undefined
          ? 'the LB has no graceful signal configured: the soft answer would read as a failure (health-first)'
          : "the LB's probe does not reach the sidecar, so it never sees the soft answer";
    return cost;
  });
  const ranked = orders.filter((o) => o.runnable).sort((a, b) => a.expected - b.expected || TIE_ORDER[a.order] - TIE_ORDER[b.order]);
  // Costs within the lossless margin of each other are a tie, settled by preference.
  const least = ranked[0]!.expected;
  const best = ranked.filter((o) => o.expected - least < LOSSLESS_BELOW).sort((a, b) => TIE_ORDER[a.order] - TIE_ORDER[b.order])[0]!;
  const forced = spec.spec.sequence;
  if (forced !== undefined) {
    const own = orders.find((o) => o.order === forced)!;
    return {
      sequence: forced,
      reason: `spec.sequence says ${forced} (expected to lose ${num(own.expected)} requests per pod termination${own.runnable ? '' : `, ${own.notRunnable}`}); the least would be ${best.order}, ${num(best.expected)}`,
      traffic: stripDurations(traffic),
      orders,
    };
  }
  const others = ranked.filter((o) => o !== best);
  const versus = others.map((o) => `${o.order} ${num(o.expected)}`).join(', ');
  const reason =
    `the least expected loss: ${num(best.expected)} requests per pod termination` +
    (others.length > 0 ? ` against ${versus}` : '') +
    ` (${traffic.requestsPerSecondPerPod} requests/s per pod, ${traffic.requestDurations}; ${lb.gracefulSignal ? `graceful signal ${lb.gracefulSignal.source} → ${lb.gracefulSignal.lbState}; ` : ''}on DOWN ${lb.cutsSessionsOnDown ? 'the LB cuts sessions' : 'the LB keeps sessions'}; a refused connection is ${lb.refused.value === 'resent' ? 're-sent' : lb.refused.value === 'failed' ? 'lost' : 'not known to be re-sent'})`;
  // Had the not-known fact the better value, would another order win?
  let decidingUnknown: string | undefined;
  if (unknown) {
    const optimistic = ranked.map((o) => ({ order: o.order, loss: o.ifKnownBetter ?? o.expected })).sort((a, b) => a.loss - b.loss);
    if (optimistic[0]!.order !== best.order && optimistic[0]!.loss < best.expected - LOSSLESS_BELOW)
      decidingUnknown = `${lb.refused.detail}: if the LB re-sends a refused connection, ${optimistic[0]!.order} would lose ${num(optimistic[0]!.loss)} and win; established, set the spec's LB field that says so`;
  }
  return { sequence: best.order, reason, traffic: stripDurations(traffic), orders, ...(decidingUnknown ? { decidingUnknown } : {}) };
}

function stripDurations(t: ModelTraffic): AssumedTraffic {
  const { durations: _, ...rest } = t;
  return rest;
}

/** An LB setting the vendor offers (src/lb/<vendor>/texts.ts), and what it would make of the loss. */
export type LbAlternative = {
  fix: Fix;
  /** The order the plan would then choose, and its expected loss. */
  order: Sequence;
  expected: number;
  /** Of it, what the order itself costs: without the requests longer than the drain timeout. */
  own: number;
  /** The spec's LB block with the setting applied (defaults filled in): what lb-config renders for it. */
  settings: LoadBalancerSpec;
  /** What the LB then does with a connection the pod refuses. */
  refused: RefusedConnection;
};

/**
 * Each LB setting the vendor offers against a loss (its graceful signal, keeping sessions on DOWN,
 * re-sending refused connections), applied to the spec and planned again: the order it leads to and
 * that order's expected loss, least first. `traffic` is the spec's (the settings leave it as it is).
 */
export function lbAlternatives(spec: GatewaySpec, given: GivenPaths, traffic: ModelTraffic): LbAlternative[] {
  const fixes = vendorFixes(spec.spec.loadBalancer);
  const seen = new Set<string>();
  const out: LbAlternative[] = [];
  for (const fix of [...fixes.gracefulAlternative, ...fixes.refusedConnectionsFix]) {
    const key = JSON.stringify(fix.edits);
    if (seen.has(key)) continue;
    seen.add(key);
    const changed = applyFix(spec, fix);
    const parsed = loadBalancerSchema.safeParse(changed.spec.loadBalancer);
    if (!parsed.success) continue;
    const block = parsed.data;
    const edited = new Set([...given, ...fix.edits.map((e) => e.path.join('.'))]);
    const lb = lbBehaviour(block, edited);
    // The order the setting leads to, whatever spec.sequence forces.
    const respec = { ...changed, spec: { ...changed.spec, loadBalancer: block, sequence: undefined } };
    const choice = chooseOrder(
      respec,
      { ...lb, lbDetectSeconds: lb.detect.value },
      (order) => orderTimings(computeTimings(respec, lb, edited, order)),
      traffic,
    );
    const best = chosenOrder(choice);
    out.push({ fix, order: choice.sequence, expected: best.expected, own: ownLoss(best), settings: block, refused: lb.refused.value });
  }
  return out.sort((a, b) => a.own - b.own);
}

/**
 * The vendor's fixes that the model confirms: each LB setting whose plan no longer runs drain-first
 * behind refused connections the LB loses (drain-first-without-redispatch and its kin), or no longer
 * runs drain-first at all (`leaveDrainFirst`). A fix the re-plan does not bear out is not offered.
 */
export function confirmedFixes(alternatives: readonly LbAlternative[], leaveDrainFirst: boolean, forced: boolean): Fix[] {
  // Where spec.sequence forces drain-first, no LB setting leaves it: only re-sending refused connections helps.
  return alternatives.filter((a) => (!forced && a.order !== 'drain-first') || (!leaveDrainFirst && a.refused === 'resent')).map((a) => a.fix);
}

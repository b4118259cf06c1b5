/**
 * What a gateway rule reads, in a file of its own so the rule files (findings.ts and the rules
 * beside scaling, long-lived streams and the Gateway API) can name it without importing each other.
 */
import type { LbModel } from '../lb/registry';
import type { RuleOf } from '../model/finding';
import type { LbBehaviour } from '../model/lb-behaviour';
import type { RolloutCheck } from '../model/rollout';
import type { GatewaySpec } from '../schema/gateway-spec';
import type { LongLivedPlan } from './long-lived';
import type { RolloutPlan } from './rollout';
import type { Scaling } from './scaling';
import type { HealthProbePlan } from './start-half';
import type { Sequence } from './sequence';
import type { Timings } from './timings';
import type { AssumedTraffic, LbAlternative, OrderCost } from './order-choice';

/**
 * What a gateway rule reads: the spec as planned, the LB's behaviour, the chosen sequence, the
 * timings, where the LB's probe enters the pod, the rollout (as planned, and as the rollout rules judge it), the scaling and the
 * long-lived plan.
 */
export type PlanContext = {
  spec: GatewaySpec;
  lb: LbBehaviour<LbModel>;
  sequence: Sequence;
  timings: Timings;
  /** Where the LB's probe enters the pod for the chosen sequence and timings (the plan's healthProbe). */
  healthProbe: HealthProbePlan;
  rollout: RolloutPlan;
  rolloutCheck: RolloutCheck;
  scaling: Scaling;
  longLived: LongLivedPlan | null;
  /** Each order's expected loss under `traffic` (src/plan/order-choice.ts); the chosen one is `sequence`'s. */
  orders: OrderCost[];
  traffic: AssumedTraffic;
  /** What each LB setting the vendor offers would make of the loss: computed when a rule asks. */
  alternatives(): LbAlternative[];
};

/** A gateway rule. */
export type FindingRule = RuleOf<PlanContext>;

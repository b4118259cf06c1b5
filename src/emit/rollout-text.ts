/** The rollout's pacing in words, for the plan's text and PLAN.md. */
import { chosenOrder } from '../plan/order-choice';
import type { Plan } from '../plan/plan-gateway';
import { READY_TIME_GRANULARITY_SECONDS } from '../plan/start-half';

/**
 * What minReadySeconds costs and buys, in words (item 5 of issue 50): each pod's replacement waits
 * it after the new pod is Ready, so that the LB sends the new pod traffic before the next old pod
 * leaves.
 */
export function minReadyBuys(plan: Plan): string {
  const t = plan.timings;
  const passes = Number(plan.derivations.minReadySeconds.inputs.probePassesSeconds?.value ?? 0);
  const path = chosenOrder(plan).startPath;
  const reach = passes > 0 ? (path === 'own-path' ? `the start hold ${passes}s, ` : `the node's rules ${passes}s, `) : '';
  return `each new pod counts as available ${t.minReadySeconds}s after it is Ready (${reach}the LB's rise ${t.lbRecoverSeconds}s, the margin, and ${READY_TIME_GRANULARITY_SECONDS}s for the Deployment's clock, kept to the second): every pod's replacement takes that much longer, and in exchange the next old pod leaves only once the LB sends the new one traffic`;
}

/** The rollout's pacing in words, for the plan's text and PLAN.md. */
import type { Plan } from '../plan/plan-gateway';

/**
 * What minReadySeconds costs and buys, in words (item 5 of issue 50): each pod's replacement waits
 * it after the new pod is Ready, so that the LB sends the new pod traffic before the next old pod
 * leaves.
 */
export function minReadyBuys(plan: Plan): string {
  const t = plan.timings;
  const hold = t.startHoldSeconds > 0 ? `the start hold ${t.startHoldSeconds}s, ` : '';
  return `each new pod counts as available ${t.minReadySeconds}s after it is Ready (${hold}the LB's rise ${t.lbRecoverSeconds}s and the margin): every pod's replacement takes that much longer, and in exchange the next old pod leaves only once the LB sends the new one traffic`;
}

import type { Sequence } from '../contract/hc';
import type { LbBehaviour } from '../model/lb-behaviour';

export type { Sequence } from '../contract/hc';

export type SequenceChoice = { sequence: Sequence; reason: string };

/**
 * The three termination orders (docs/facts.md §2; names in src/contract/hc.ts). None is right for
 * every LB:
 * - soft-drain: the LB has a "stop new, keep existing" signal: give it, wait, drain, then fail;
 * - health-first: the LB keeps sessions on DOWN: fail health, wait detection, then drain;
 * - drain-first: the LB cuts sessions on DOWN: drain to zero first, fail health only then.
 */
export function chooseSequence(lb: LbBehaviour): SequenceChoice {
  if (lb.gracefulSignal && lb.probeReachesSidecar) {
    return {
      sequence: 'soft-drain',
      reason: `the LB has a graceful signal (${lb.gracefulSignal.source} → ${lb.gracefulSignal.lbState}): signal first, drain once the LB stops sending new connections, fail hard at zero in-flight`,
    };
  }
  if (!lb.cutsSessionsOnDown) {
    return {
      sequence: 'health-first',
      reason: `the LB does not cut sessions on DOWN (${lb.onDown}): fail health first, drain after the LB has stopped sending`,
    };
  }
  return {
    sequence: 'drain-first',
    reason: `the LB cuts sessions on DOWN (${lb.onDown}) and has no graceful signal configured: stop new connections and finish in-flight before failing health`,
  };
}

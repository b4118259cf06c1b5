import type { LoadBalancerSpec } from '../schema/lb-models';
import type { GivenPaths } from '../plan/derived';
import type { LbBehaviour } from '../plan/lb-behaviour';
import { citrixBehaviour } from './citrix/behaviour';
import { envoyBehaviour } from './envoy/behaviour';
import { f5Behaviour } from './f5/behaviour';
import { haproxyBehaviour } from './haproxy/behaviour';
import { nlbBehaviour } from './nlb/behaviour';

/** Normalises any vendor's LB block into the one behaviour the planner reasons about. */
export function lbBehaviour(lb: LoadBalancerSpec, given: GivenPaths): LbBehaviour {
  switch (lb.model) {
    case 'citrix': return citrixBehaviour(lb, given);
    case 'f5': return f5Behaviour(lb, given);
    case 'nlb': return nlbBehaviour(lb, given);
    case 'haproxy': return haproxyBehaviour(lb, given);
    case 'envoy': return envoyBehaviour(lb, given);
  }
}

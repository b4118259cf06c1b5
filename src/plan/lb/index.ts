import type { LoadBalancerSpec } from '../../schema/lb-models';
import type { GivenPaths } from '../derived';
import type { LbBehaviour } from '../lb-behaviour';
import { citrixBehaviour } from './citrix';
import { envoyBehaviour } from './envoy';
import { f5Behaviour } from './f5';
import { haproxyBehaviour } from './haproxy';
import { nlbBehaviour } from './nlb';

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

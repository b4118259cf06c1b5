import { setAt, specPath } from '../../core/fix';
import type { VendorFixes, VendorTexts } from '../../model/lb-vendor';
import type { NlbLb } from './schema';

const LB = (key: string) => specPath(`spec.loadBalancer.${key}`);

export const nlbTexts: VendorTexts = {
  gracefulAlternative: 'unhealthyConnectionTermination: false (health-first; NLB has no graceful signal)',
  refusedConnectionsFix:
    'set target_health_state.unhealthy.connection_termination.enabled=false (unhealthyConnectionTermination: false) so health-first applies',
  connectionReuseFix: 'unhealthyConnectionTermination: false (health-first: the NLB stops sending before the drain, and DOWN cuts nothing)',
};

export const nlbFixes: VendorFixes<NlbLb> = {
  gracefulAlternative: () => [
    { description: 'no connection termination on unhealthy targets (health-first)', edits: [setAt(LB('unhealthyConnectionTermination'), false)] },
  ],
  refusedConnectionsFix: () => nlbFixes.gracefulAlternative({} as NlbLb),
};

import type { VendorTexts } from '../vendor';

export const nlbTexts: VendorTexts = {
  gracefulAlternative: 'unhealthyConnectionTermination: false (health-first; NLB has no graceful signal)',
  refusedConnectionsFix: 'set target_health_state.unhealthy.connection_termination.enabled=false (unhealthyConnectionTermination: false) so health-first applies',
  connectionReuseFix: 'unhealthyConnectionTermination: false (health-first: the NLB stops sending before the drain, and DOWN cuts nothing)',
};

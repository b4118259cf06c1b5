import { renderCitrix } from '../../lb/citrix/lb-config';
import type { LbConfigInput } from './common';
import { renderEnvoy } from '../../lb/envoy/lb-config';
import { renderF5 } from '../../lb/f5/lb-config';
import { renderHaproxy } from '../../lb/haproxy/lb-config';
import { renderNlb } from '../../lb/nlb/lb-config';

export type { LbConfigInput, ServerAddress } from './common';

/** The LB-side settings the plan assumes, in the syntax of the spec's LB vendor. Pure. */
export function renderLbConfig(input: LbConfigInput): string {
  switch (input.plan.loadBalancer.settings.model) {
    case 'haproxy': return renderHaproxy(input);
    case 'citrix': return renderCitrix(input);
    case 'f5': return renderF5(input);
    case 'nlb': return renderNlb(input);
    case 'envoy': return renderEnvoy(input);
  }
}

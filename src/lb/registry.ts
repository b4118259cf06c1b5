import { renderCitrix } from './citrix/lb-config';
import type { LbConfigInput } from './lb-config-text';
import { renderEnvoy } from './envoy/lb-config';
import { renderF5 } from './f5/lb-config';
import { renderHaproxy } from './haproxy/lb-config';
import { renderNlb } from './nlb/lb-config';

export type { LbConfigInput, ServerAddress } from './lb-config-text';

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

import { renderCitrix } from './citrix';
import type { LbConfigInput } from './common';
import { renderEnvoy } from './envoy';
import { renderF5 } from './f5';
import { renderHaproxy } from './haproxy';
import { renderNlb } from './nlb';

export type { LbConfigInput, ServerAddress } from './common';

/** The LB-side settings the plan assumes, in the syntax of the spec's LB vendor. Pure. */
export function renderLbConfig(input: LbConfigInput): string {
  switch (input.spec.spec.loadBalancer.model) {
    case 'haproxy': return renderHaproxy(input);
    case 'citrix': return renderCitrix(input);
    case 'f5': return renderF5(input);
    case 'nlb': return renderNlb(input);
    case 'envoy': return renderEnvoy(input);
  }
}

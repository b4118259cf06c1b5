import { setAt, specPath } from '../../core/fix';
import type { VendorFixes, VendorTexts } from '../../model/lb-vendor';
import type { EnvoyLb } from './schema';

const LB = (key: string) => specPath(`spec.loadBalancer.${key}`);

export const envoyTexts: VendorTexts = {
  gracefulAlternative: 'closeConnectionsOnHostHealthFailure: false (health-first)',
  refusedConnectionsFix: 'closeConnectionsOnHostHealthFailure: false (health-first); Envoy already retries a refused connect on another host',
  connectionReuseFix: 'closeConnectionsOnHostHealthFailure: false (health-first: the in-mesh Envoy stops sending before the drain)',
};

export const envoyFixes: VendorFixes<EnvoyLb> = {
  gracefulAlternative: () => [{ description: 'keep connections on ejection (health-first)', edits: [setAt(LB('closeConnectionsOnHostHealthFailure'), false)] }],
  refusedConnectionsFix: () => envoyFixes.gracefulAlternative({} as EnvoyLb),
};

import type { VendorTexts } from '../vendor';

export const envoyTexts: VendorTexts = {
  gracefulAlternative: 'closeConnectionsOnHostHealthFailure: false (health-first)',
  refusedConnectionsFix: 'closeConnectionsOnHostHealthFailure: false (health-first); Envoy already retries a refused connect on another host',
  connectionReuseFix: 'closeConnectionsOnHostHealthFailure: false (health-first: the in-mesh Envoy stops sending before the drain)',
};

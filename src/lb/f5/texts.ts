import type { VendorTexts } from '../vendor';

export const f5Texts: VendorTexts = {
  gracefulAlternative: 'recvDisable on the monitor (soft-drain), or serviceDownAction none (health-first)',
  refusedConnectionsFix: 'add recv-disable to the monitor so soft-drain applies, or set service-down-action none for health-first',
  connectionReuseFix: 'recvDisable on the monitor (soft-drain) or serviceDownAction none (health-first): the LB stops sending before the drain',
};

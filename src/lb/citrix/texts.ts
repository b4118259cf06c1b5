import type { VendorTexts } from '../vendor';

export const citrixTexts: VendorTexts = {
  gracefulAlternative: 'trofsCode on the monitor (soft-drain: TROFS first), or downStateFlush DISABLED (health-first)',
  refusedConnectionsFix: 'add -trofsCode (or -trofsString) to the monitor so soft-drain applies, or set downStateFlush DISABLED for health-first',
  connectionReuseFix: 'trofsCode on the monitor (soft-drain) or downStateFlush DISABLED (health-first): the LB stops sending before the drain; or maxReq: 1 (set serviceGroup -maxReq 1: a new connection per request, CTX135155; documented, not measured here)',
};

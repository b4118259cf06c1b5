import type { VendorTexts } from '../vendor';

export const citrixTexts: VendorTexts = {
  gracefulAlternative: 'trofsCode on the monitor (soft-drain: TROFS first), or downStateFlush DISABLED (health-first)',
  refusedConnectionsFix: 'add -trofsCode (or -trofsString) to the monitor so soft-drain applies, or set downStateFlush DISABLED for health-first',
};

import { setAt, specPath } from '../../core/fix';
import type { VendorFixes, VendorTexts } from '../../model/lb-vendor';
import type { CitrixLb } from './schema';

const LB = (key: string) => specPath(`spec.loadBalancer.${key}`);

export const citrixTexts: VendorTexts = {
  gracefulAlternative: 'trofsCode on the monitor (soft-drain: TROFS first), or downStateFlush DISABLED (health-first)',
  refusedConnectionsFix:
    'retryOnReset: true (an AppQoE action -retryOnReset YES on the virtual server: a refused connection goes to the next service), or add -trofsCode (or -trofsString) to the monitor so soft-drain applies, or set downStateFlush DISABLED for health-first',
  connectionReuseFix:
    'trofsCode on the monitor (soft-drain) or downStateFlush DISABLED (health-first): the LB stops sending before the drain; or maxReq: 1 (set serviceGroup -maxReq 1: a new connection per request, CTX135155; documented, not measured here)',
};

// 299: an unassigned 2xx code no application answers, so it can only mean TROFS.
export const citrixFixes: VendorFixes<CitrixLb> = {
  gracefulAlternative: () => [
    { description: 'monitor -trofsCode 299 (soft-drain)', edits: [setAt(LB('trofsCode'), 299)] },
    { description: 'downStateFlush DISABLED (health-first)', edits: [setAt(LB('downStateFlush'), 'DISABLED')] },
  ],
  refusedConnectionsFix: () => [
    { description: 'AppQoE retryOnReset (refused connections re-sent)', edits: [setAt(LB('retryOnReset'), true)] },
    ...citrixFixes.gracefulAlternative({} as CitrixLb),
  ],
};

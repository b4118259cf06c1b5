import { setAt, specPath } from '../../core/fix';
import type { VendorFixes, VendorTexts } from '../../model/lb-vendor';
import type { F5Lb } from './schema';

const LB = (key: string) => specPath(`spec.loadBalancer.${key}`);

export const f5Texts: VendorTexts = {
  gracefulAlternative: 'recvDisable on the monitor (soft-drain), or serviceDownAction none (health-first)',
  refusedConnectionsFix:
    'reselectTries: 1 or more (pool reselect-tries: a refused connection goes to another member), or add recv-disable to the monitor so soft-drain applies, or set service-down-action none for health-first',
  connectionReuseFix: 'recvDisable on the monitor (soft-drain) or serviceDownAction none (health-first): the LB stops sending before the drain',
};

export const f5Fixes: VendorFixes<F5Lb> = {
  gracefulAlternative: () => [
    { description: 'monitor recv-disable (soft-drain)', edits: [setAt(LB('recvDisable'), 'gracegate-soft-drain')] },
    { description: 'service-down-action none (health-first)', edits: [setAt(LB('serviceDownAction'), 'none')] },
  ],
  refusedConnectionsFix: () => [
    { description: 'pool reselect-tries 1 (refused connections re-sent)', edits: [setAt(LB('reselectTries'), 1)] },
    ...f5Fixes.gracefulAlternative({} as F5Lb),
  ],
};

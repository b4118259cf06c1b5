import { f5Fixes } from './texts';
import type { VendorRule } from '../../model/lb-vendor';
import type { F5Lb } from './schema';

export const f5Findings: VendorRule<F5Lb>[] = [
  {
    id: 'f5-service-down-drop',
    severity: 'warning',
    field: 'spec.loadBalancer.serviceDownAction',
    check: (_ctx, lb) =>
      lb.serviceDownAction === 'drop'
        ? {
            message: 'service-down-action drop silently discards live flows: a client still waiting hangs until its own timeout instead of seeing a reset',
            remediation: 'prefer none (with health-first); recv-disable (soft-drain) leaves nothing to drop unless the drain times out',
            fixes: f5Fixes.gracefulAlternative({} as F5Lb).filter((f) => f.description.startsWith('service-down-action')),
          }
        : undefined,
  },
];

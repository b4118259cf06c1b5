import { setAt, specPath } from '../../core/fix';
import { citrixFixes } from './texts';
import type { VendorRule } from '../../model/lb-vendor';
import type { CitrixLb } from './schema';

export const citrixFindings: VendorRule<CitrixLb>[] = [
  {
    id: 'citrix-trofs-recommended',
    severity: 'info',
    field: 'spec.loadBalancer.trofsCode',
    check: ({ lb }) =>
      lb.cutsSessionsOnDown && !lb.gracefulSignal
        ? {
            message: 'downStateFlush ENABLED without a TROFS code: the plan relies on drain-first',
            remediation: 'ask the LB team for -trofsCode on the monitor (one TROFS monitor per service) so soft-drain applies',
            fixes: citrixFixes.gracefulAlternative({} as CitrixLb).slice(0, 1),
          }
        : undefined,
  },
  {
    id: 'citrix-trofs-keeps-persistent-clients',
    severity: 'warning',
    field: 'spec.loadBalancer.trofsPersistence',
    check: ({ sequence }, lb) =>
      sequence === 'soft-drain' && lb.persistenceType !== 'NONE' && lb.trofsPersistence === 'ENABLED'
        ? {
            message: `a service in TROFS keeps honouring ${lb.persistenceType} persistence (trofsPersistence ENABLED, NetScaler's default): a client stuck to this pod is still sent to it after the soft signal, and once the drain starts one LB buffer later the pod refuses its new connections; whether NetScaler re-sends those elsewhere is not established`,
            remediation: 'trofsPersistence: DISABLED (set lb vserver <vserver> -trofsPersistence DISABLED): TROFS then moves persistent clients on too',
            fixes: [{ description: 'trofsPersistence DISABLED', edits: [setAt(specPath('spec.loadBalancer.trofsPersistence'), 'DISABLED')] }],
            expectedLoss: 'refused-connections',
          }
        : undefined,
  },
];

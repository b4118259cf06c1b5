import type { FindingRule } from '../../plan/finding';
import type { CitrixLb } from './schema';

export const citrixFindings: FindingRule<[CitrixLb]>[] = [
  {
    id: 'citrix-trofs-recommended',
    severity: 'info',
    field: 'spec.loadBalancer.trofsCode',
    check: ({ lb }) => (lb.cutsSessionsOnDown && !lb.gracefulSignal ? {
      message: 'downStateFlush ENABLED without a TROFS code: the plan relies on drain-first',
      remediation: 'ask the LB team for -trofsCode on the monitor (one TROFS monitor per service) so soft-drain applies',
    } : undefined),
  },
];

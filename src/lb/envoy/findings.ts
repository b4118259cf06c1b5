import { removeAt, setAt, specPath } from '../../core/fix';
import type { VendorRule } from '../../model/lb-vendor';
import type { EnvoyLb } from './schema';

export const envoyFindings: VendorRule<EnvoyLb>[] = [
  {
    id: 'envoy-close-connections-not-http',
    severity: 'info',
    field: 'spec.loadBalancer.closeConnectionsOnHostHealthFailure',
    check: (_ctx, lb) =>
      lb.closeConnectionsOnHostHealthFailure && lb.upstreamProtocol === 'http'
        ? {
            message:
              'close_connections_on_host_health_failure is only supported for connections created by tcp_proxy (Envoy cluster.proto): for HTTP it does nothing, and the plan assumes connections survive ejection',
            remediation: 'drop closeConnectionsOnHostHealthFailure (or set upstreamProtocol: tcp if the in-mesh Envoy forwards with tcp_proxy)',
            fixes: [
              { description: 'drop closeConnectionsOnHostHealthFailure', edits: [removeAt(specPath('spec.loadBalancer.closeConnectionsOnHostHealthFailure'))] },
              { description: 'upstreamProtocol tcp', edits: [setAt(specPath('spec.loadBalancer.upstreamProtocol'), 'tcp')] },
            ],
          }
        : undefined,
  },
];

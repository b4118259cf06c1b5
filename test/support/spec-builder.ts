import { resolveGatewaySpec, type ResolvedSpec } from '../../src/schema/parse-spec';

/** A minimal valid spec (the seed's HAProxy lab), with any part replaced by `overrides.spec`. */
export function specInput(overrides: { spec?: Record<string, unknown>; metadata?: Record<string, unknown> } = {}): Record<string, unknown> {
  return {
    apiVersion: 'gracegate.dev/v1alpha1',
    kind: 'GracefulGateway',
    metadata: { name: 'igw', namespace: 'istio-ingress', ...overrides.metadata },
    spec: {
      replicas: 2,
      nodes: 3,
      chart: { kind: 'istio-gateway', version: '1.27.9' },
      traffic: { longRequestP99Seconds: 100 },
      loadBalancer: { model: 'haproxy', inter: '2s', fall: 2, onMarkedDown: 'shutdown-sessions', redispatch: true },
      health: { exposure: 'nodePort', port: 18180, nodePort: 30180 },
      ...overrides.spec,
    },
  };
}

export function resolved(overrides: Parameters<typeof specInput>[0] = {}): ResolvedSpec {
  return resolveGatewaySpec(specInput(overrides));
}

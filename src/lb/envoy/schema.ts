import { z } from 'zod';
import { duration, vendorDuration } from '../../model/spec-fields';

/** Envoy's config validation refuses a health check interval or timeout that is not > 0s (api/envoy/config/core/v3/health_check.proto). */
const healthCheckTime = (field: string) =>
  vendorDuration(
    (s) => s > 0,
    (s) => `Envoy refuses health_check ${field} ${s}s: value must be greater than 0s (Envoy api/envoy/config/core/v3/health_check.proto)`,
  );

/** An in-mesh Envoy (another Istio/Envoy hop) load-balancing onto the gateway pods. */
export const envoySchema = z.strictObject({
  model: z.literal('envoy'),
  /**
   * Active health checking of the health endpoint. Required: without it Envoy never probes the
   * endpoint, and the only lever this tool has would not exist.
   */
  activeHealthCheck: z
    .strictObject({
      interval: healthCheckTime('interval').describe('health_check interval'),
      /** @default 1s. */
      timeout: healthCheckTime('timeout').default(1).describe('health_check timeout'),
      /** Random extra time added to each interval. @default 0. */
      intervalJitter: duration.default(0).describe('health_check interval_jitter'),
      /** @default 1: checks in a row that must pass before an ejected host takes traffic again. */
      healthyThreshold: z.int().min(1).default(1).describe('health_check healthy_threshold'),
      /** @default 2; a non-expected HTTP status ejects at once whatever this says. */
      unhealthyThreshold: z.int().min(1).default(2).describe('health_check unhealthy_threshold (a non-expected status ejects at once)'),
    })
    .describe('Envoy active health check against the sidecar'),
  /** DestinationRule outlierDetection (Istio defaults). Kept for the record; not the lever. */
  outlierDetection: z
    .strictObject({
      consecutive5xxErrors: z.int().min(0).default(5),
      interval: duration.default(10),
      baseEjectionTime: duration.default(30),
      maxEjectionPercent: z.int().min(0).max(100).default(10),
    })
    .prefault({})
    .describe('DestinationRule outlierDetection; Istio defaults'),
  /**
   * How the in-mesh Envoy forwards to the gateway pods: `http` (an HTTP connection manager and its
   * router) or `tcp` (tcp_proxy, e.g. TLS passthrough). @default http.
   */
  upstreamProtocol: z
    .enum(['http', 'tcp'])
    .default('http')
    .describe('how the in-mesh Envoy forwards to the gateway: http (HCM + router) or tcp (tcp_proxy); default http'),
  /**
   * The cluster's `close_connections_on_host_health_failure`: closes the connections to an ejected
   * host, but only those tcp_proxy made (Envoy cluster.proto); for HTTP it does nothing. @default false.
   */
  closeConnectionsOnHostHealthFailure: z
    .boolean()
    .default(false)
    .describe('close_connections_on_host_health_failure: closes tcp_proxy connections on ejection (no effect on HTTP); default false'),
});

export type EnvoyLb = z.output<typeof envoySchema>;

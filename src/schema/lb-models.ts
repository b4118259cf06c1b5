import { z } from 'zod';
import { duration } from './fields';

/**
 * The load balancer, described in its vendor's own words and defaults (FACTS.md §3). Each block
 * is strict: a key the vendor does not have is an error, not a silently ignored typo. An omitted
 * field takes the vendor's documented default, so a spec records only what differs from it.
 */

/** Citrix NetScaler: `add lb monitor <name> HTTP …` and the service's `downStateFlush`. */
export const citrixSchema = z.strictObject({
  model: z.literal('citrix'),
  /** Probe interval. @default 5s (Citrix default; must exceed resptimeout). */
  interval: duration.default(5).describe('Monitor -interval; Citrix default 5 s; must exceed resptimeout'),
  /** Response timeout of one probe. @default 2s (Citrix default). */
  resptimeout: duration.default(2).describe('Monitor -resptimeout; Citrix default 2 s'),
  /** Consecutive failed probes before DOWN. @default 3 (Citrix default). */
  retries: z.int().min(1).default(3).describe('Monitor -retries; Citrix default 3'),
  /** @default 0: all `retries` probes must fail (Citrix default). */
  failureRetries: z.int().min(0).default(0).describe('Monitor -failureRetries; Citrix default 0 (all retries must fail)'),
  /** @default 1 (Citrix default). */
  successRetries: z.int().min(1).default(1).describe('Monitor -successRetries; Citrix default 1'),
  /** Time a DOWN service waits before it is probed again (recovery only). @default 30s. */
  downTime: duration.default(30).describe('Monitor -downTime; Citrix default 30 s (recovery only)'),
  /** Response codes that mean UP. @default [200]. */
  respCode: z.array(z.int().min(100).max(599)).min(1).default([200]).describe('Monitor -respCode: HTTP codes meaning UP'),
  /** @default ENABLED: Citrix flushes established connections and in-flight requests on DOWN (CTX140147). */
  downStateFlush: z.enum(['ENABLED', 'DISABLED']).default('ENABLED').describe('Service downStateFlush; Citrix default ENABLED (flush on DOWN)'),
  /** Response code that puts the service into TROFS (stop new, keep persistent). Enables soft-drain. */
  trofsCode: z.int().min(100).max(599).optional().describe('Monitor -trofsCode: HTTP code putting the service in TROFS (graceful signal)'),
  /** Response body text that puts the service into TROFS. Enables soft-drain. */
  trofsString: z.string().min(1).optional().describe('Monitor -trofsString: body text putting the service in TROFS (graceful signal)'),
});

/** F5 BIG-IP LTM: HTTP monitor and the pool's Action On Service Down. */
export const f5Schema = z.strictObject({
  model: z.literal('f5'),
  /** @default 5s (F5 HTTP monitor default). */
  interval: duration.default(5).describe('HTTP monitor interval; F5 default 5 s'),
  /** DOWN when no valid response arrived within this time. @default 16s (3 x interval + 1). */
  timeout: duration.default(16).describe('HTTP monitor timeout; F5 default 16 s (3 x interval + 1)'),
  /** @default none: existing flows continue when a member goes DOWN (F5 default). */
  serviceDownAction: z.enum(['none', 'reset', 'drop', 'reselect']).default('none').describe('Pool service-down-action; F5 default none'),
  /** Monitor receive-disable string: a body containing it marks the member disabled (graceful signal). */
  recvDisable: z.string().min(1).optional().describe('HTTP monitor recv-disable string (graceful signal: member disabled, existing connections continue)'),
});

/** AWS NLB driven by the AWS Load Balancer Controller (annotations on the gateway Service). */
export const nlbSchema = z.strictObject({
  model: z.literal('nlb'),
  /** @default instance (the controller's default for NLB target type). */
  targetType: z.enum(['ip', 'instance']).default('instance').describe('aws-load-balancer-nlb-target-type; controller default instance'),
  /** @default 10s (controller default). */
  healthCheckInterval: duration.default(10).describe('aws-load-balancer-healthcheck-interval; controller default 10 s'),
  /** @default 10s, or 6s for instance targets with externalTrafficPolicy Local (controller defaults). */
  healthCheckTimeout: duration.optional().describe('aws-load-balancer-healthcheck-timeout; controller default 10 s (6 s for instance + Local)'),
  /** @default 3, or 2 for instance targets with externalTrafficPolicy Local (controller defaults). */
  unhealthyThreshold: z.int().min(2).max(10).optional().describe('aws-load-balancer-healthcheck-unhealthy-threshold; controller default 3 (2 for instance + Local)'),
  /** @default 3 (controller default). */
  healthyThreshold: z.int().min(2).max(10).default(3).describe('aws-load-balancer-healthcheck-healthy-threshold; controller default 3'),
  /** Seconds a deregistering target keeps its connections. @default 300s (AWS default). */
  deregistrationDelay: duration.default(300).describe('target group deregistration_delay.timeout_seconds; AWS default 300 s'),
  /** @default false: connections of a deregistered target are not reset at the end of the delay. */
  deregistrationConnectionTermination: z.boolean().default(false).describe('deregistration_delay.connection_termination.enabled; AWS default false'),
  /** @default true: the NLB resets connections to an unhealthy target (RST on DOWN). */
  unhealthyConnectionTermination: z.boolean().default(true).describe('target_health_state.unhealthy.connection_termination.enabled; AWS default true (RST on DOWN)'),
  /**
   * Extra seconds after the target is marked unhealthy before new connections stop arriving.
   * @default 40s: users measure 30-40 s (aws/containers-roadmap#470).
   */
  propagationDelay: duration.default(40).describe('seconds between unhealthy and no more new connections; 40 s from aws/containers-roadmap#470'),
});

/** HAProxy backend: `server … check inter … fall …` and friends. */
export const haproxySchema = z.strictObject({
  model: z.literal('haproxy'),
  /** @default 2s (HAProxy default). */
  inter: duration.default(2).describe('server inter; HAProxy default 2000 ms'),
  /** Interval while the server is transitioning (after a failed check). @default inter. */
  fastinter: duration.optional().describe('server fastinter; HAProxy default = inter'),
  /** Interval while DOWN (recovery only). @default inter. */
  downinter: duration.optional().describe('server downinter; HAProxy default = inter'),
  /** @default 3 (HAProxy default). */
  fall: z.int().min(1).default(3).describe('server fall; HAProxy default 3'),
  /** @default 2 (HAProxy default). */
  rise: z.int().min(1).default(2).describe('server rise; HAProxy default 2'),
  /** @default none: sessions survive DOWN (HAProxy default); shutdown-sessions kills them. */
  onMarkedDown: z.enum(['none', 'shutdown-sessions']).default('none').describe('server on-marked-down; HAProxy default none'),
  /** Connection retries to a server. @default 3 (HAProxy default). */
  retries: z.int().min(0).default(3).describe('retries; HAProxy default 3'),
  /** `option redispatch`: re-send a refused connection to another server. @default false. */
  redispatch: z.boolean().default(false).describe('option redispatch; HAProxy default off'),
  /** `http-check disable-on-404`: a 404 puts the server in NOLB (graceful signal). @default false. */
  disableOn404: z.boolean().default(false).describe('http-check disable-on-404; HAProxy default off'),
  /**
   * `retry-on conn-failure empty-response` with `http-request disable-l7-retry unless METH_GET`: a
   * GET or HEAD that meets HTTP/1's keep-alive race (the server closed the connection under it, no
   * answer) is retried; other methods never are. @default false (HAProxy retries connects only).
   */
  retryOnEmptyResponse: z.boolean().default(false).describe('retry-on conn-failure empty-response, GET/HEAD only; HAProxy default off'),
});

/** An in-mesh Envoy (another Istio/Envoy hop) load-balancing onto the gateway pods. */
export const envoySchema = z.strictObject({
  model: z.literal('envoy'),
  /**
   * Active health checking of the health endpoint. Required: without it Envoy never probes the
   * endpoint, and the only lever this tool has would not exist.
   */
  activeHealthCheck: z.strictObject({
    interval: duration.describe('health_check interval'),
    /** @default 1s. */
    timeout: duration.default(1).describe('health_check timeout'),
    /** Random extra time added to each interval. @default 0. */
    intervalJitter: duration.default(0).describe('health_check interval_jitter'),
    /** @default 1: checks in a row that must pass before an ejected host takes traffic again. */
    healthyThreshold: z.int().min(1).default(1).describe('health_check healthy_threshold'),
    /** @default 2; a non-expected HTTP status ejects at once whatever this says. */
    unhealthyThreshold: z.int().min(1).default(2).describe('health_check unhealthy_threshold (a non-expected status ejects at once)'),
  }).describe('Envoy active health check against the sidecar'),
  /** DestinationRule outlierDetection (Istio defaults). Kept for the record; not the lever. */
  outlierDetection: z.strictObject({
    consecutive5xxErrors: z.int().min(0).default(5),
    interval: duration.default(10),
    baseEjectionTime: duration.default(30),
    maxEjectionPercent: z.int().min(0).max(100).default(10),
  }).prefault({}).describe('DestinationRule outlierDetection; Istio defaults'),
  /** tcp_proxy `close_connections_on_host_health_failure`. @default false: connections kept. */
  closeConnectionsOnHostHealthFailure: z.boolean().default(false).describe('close_connections_on_host_health_failure (tcp_proxy only); default false'),
});

export const loadBalancerSchema = z.discriminatedUnion('model', [citrixSchema, f5Schema, nlbSchema, haproxySchema, envoySchema]);
export type LoadBalancerSpec = z.output<typeof loadBalancerSchema>;
export type LbModel = LoadBalancerSpec['model'];

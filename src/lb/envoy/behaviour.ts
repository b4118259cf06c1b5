import { roundSeconds } from '../../core/duration';
import type { EnvoyLb } from './schema';
import { derived, specInput, type GivenPaths } from '../../model/derived';
import type { LbBehaviour } from '../../model/lb-behaviour';

const P = 'spec.loadBalancer.activeHealthCheck';

/**
 * Istio's default route retry policy (istio/istio pilot/pkg/networking/core/route/retry): retry_on
 * connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes on another host. The
 * end-to-end harness runs it on a real front Envoy (docs/e2e/RESULTS.md).
 */
const ISTIO_RETRY = {
  kind: 'measured',
  ref: "Istio's default route retry policy (istio/istio pilot/pkg/networking/core/route/retry) on a real front Envoy, docs/e2e/RESULTS.md",
} as const;

/**
 * An in-mesh Envoy doing active health checks: a non-expected status ejects the host at once, so
 * detection is one interval (plus jitter) after the flip, whatever `unhealthyThreshold` says.
 */
export function envoyBehaviour(lb: EnvoyLb, given: GivenPaths): LbBehaviour<EnvoyLb['model']> {
  const hc = lb.activeHealthCheck;
  // close_connections_on_host_health_failure is "currently only supported for connections created
  // by tcp_proxy" (Envoy config/cluster/v3/cluster.proto): HTTP connections survive ejection.
  const closes = lb.closeConnectionsOnHostHealthFailure && lb.upstreamProtocol === 'tcp';
  return {
    model: 'envoy',
    probeIntervalSeconds: hc.interval + hc.intervalJitter,
    // A cluster that has not carried traffic yet is checked every no_traffic_interval instead (Envoy
    // default 60 s): the formula holds because lb-config sets no_traffic_interval to the interval.
    detect: derived(
      roundSeconds(hc.interval + hc.intervalJitter),
      'interval + intervalJitter (a non-expected status ejects at once; no_traffic_interval = interval)',
      {
        interval: specInput(given, `${P}.interval`, hc.interval, ''),
        intervalJitter: specInput(given, `${P}.intervalJitter`, hc.intervalJitter, 'Envoy interval_jitter 0'),
      },
    ),
    recover: derived(roundSeconds((hc.interval + hc.intervalJitter) * hc.healthyThreshold), '(interval + intervalJitter) x healthyThreshold', {
      interval: specInput(given, `${P}.interval`, hc.interval, ''),
      intervalJitter: specInput(given, `${P}.intervalJitter`, hc.intervalJitter, 'Envoy interval_jitter 0'),
      healthyThreshold: specInput(given, `${P}.healthyThreshold`, hc.healthyThreshold, 'healthy_threshold 1'),
    }),
    propagation: { value: 0, source: 'Envoy stops picking the host at ejection' },
    cutsSessionsOnDown: closes,
    onDown: closes
      ? 'close_connections_on_host_health_failure with tcp_proxy: connections to the host are closed on ejection'
      : lb.closeConnectionsOnHostHealthFailure
        ? 'existing connections are kept on ejection (close_connections_on_host_health_failure acts on tcp_proxy connections only)'
        : 'existing connections are kept on ejection',
    onDownSource: { kind: 'vendor-doc', ref: 'Envoy api/envoy/config/cluster/v3/cluster.proto, close_connections_on_host_health_failure' },
    refused:
      lb.upstreamProtocol === 'tcp'
        ? {
            value: 'failed',
            detail: 'tcp_proxy makes one connection attempt unless max_connect_attempts says more: a connect the pod refuses fails the client connection',
            source: { kind: 'vendor-doc', ref: 'Envoy api/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto, max_connect_attempts (default 1)' },
            holdMs: 0,
          }
        : {
            value: 'resent',
            detail: "Envoy retries a connect failure on another host (Istio's default route retry policy: retry_on connect-failure, previous_hosts)",
            source: ISTIO_RETRY,
            holdMs: 0,
          },
    resetRequestResent: {
      value: false,
      detail: "Istio's default retry_on has no reset: a request whose connection the pod reset under it fails",
      source: ISTIO_RETRY,
    },
    // HTTP: Envoy's connection pools reuse upstream connections; tcp_proxy: a client's own
    // connection is the connection to the pod.
    reuse: {
      drainFirst: true,
      otherOrders: true,
      detail:
        lb.upstreamProtocol === 'tcp'
          ? "tcp_proxy passes each client's connection to the pod: a client's keep-alive connection is a connection to the pod"
          : "the in-mesh Envoy's connection pool reuses its connections to the pod",
      source: { kind: 'vendor-doc', ref: 'Envoy connection pooling (docs: intro/arch_overview/upstream/connection_pooling)' },
    },
    probeReachesSidecar: true,
    // In-mesh: it probes the pod IP.
    probesPodIp: true,
  };
}

import { roundSeconds } from '../../core/duration';
import type { EnvoyLb } from './schema';
import { derived, specInput, type GivenPaths } from '../../model/derived';
import type { LbBehaviour } from '../../model/lb-behaviour';

const P = 'spec.loadBalancer.activeHealthCheck';

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
    resendsRefusedConnections: 'yes',
    resendDetail: 'Envoy retries a connect failure on another host (retry_on connect-failure, on by default in Istio)',
    // HTTP: Envoy's connection pools reuse upstream connections; tcp_proxy: a client's own
    // connection is the connection to the pod.
    reusesConnections: true,
    reuseDetail:
      lb.upstreamProtocol === 'tcp'
        ? "tcp_proxy passes each client's connection to the pod: a client's keep-alive connection is a connection to the pod"
        : "the in-mesh Envoy's connection pool reuses its connections to the pod",
    probeReachesSidecar: true,
    // In-mesh: it probes the pod IP.
    probesPodIp: true,
  };
}

import { Duration } from '../core/duration';
import type { EnvoyLb } from '../lb/envoy/schema';
import { header, healthProbePort, LB_HEALTH_PATH, planned, withTrailingComments, type LbConfigInput, type Line } from './text';

/** Envoy durations in their protobuf JSON form: `2s`, `0.5s`. */
const envoyDuration = (seconds: number): string => Duration.seconds(seconds).toString();

/** The cluster fields of the in-mesh Envoy in front of the gateway pods: active health check on the sidecar. */
export function renderEnvoy(lb: EnvoyLb, input: LbConfigInput): string {
  const { plan } = input;
  const hc = lb.activeHealthCheck;
  const lines: Line[] = [
    { text: 'health_checks:', why: 'active health checking: the only lever gracegate has on an in-mesh Envoy' },
    { text: `- interval: ${envoyDuration(hc.interval)}`, why: `detection ~ ${planned(plan, 'lbDetectSeconds')}` },
    { text: `  interval_jitter: ${envoyDuration(hc.intervalJitter)}`, why: 'part of the detection time' },
    // Until a cluster has carried traffic Envoy checks every no_traffic_interval, 60 s by default
    // (Envoy health_check.proto): a pod leaving a cluster still warming up would go unnoticed that long.
    {
      text: `  no_traffic_interval: ${envoyDuration(hc.interval)}`,
      why: "= interval: the detection above holds from the cluster's first request, not only once it carries traffic (Envoy's default is 60 s)",
    },
    { text: `  timeout: ${envoyDuration(hc.timeout)}`, why: 'a hung probe fails after this' },
    { text: `  unhealthy_threshold: ${hc.unhealthyThreshold}`, why: 'connect failures and timeouts only; a 503 ejects at once' },
    { text: `  healthy_threshold: ${hc.healthyThreshold}`, why: `recovery only: ${planned(plan, 'lbRecoverSeconds')}` },
    { text: '  http_health_check:', why: 'an HTTP probe, so the status code is the signal' },
    { text: `    path: ${LB_HEALTH_PATH}`, why: "the sidecar's LB endpoint (/health is readiness and flips later)" },
    {
      text: '',
      why: `probes go to the sidecar's health port, not the traffic port: set lb_endpoints[].endpoint.health_check_config.port_value: ${healthProbePort(plan.health) ?? plan.health.port} on each gateway endpoint`,
    },
    {
      text: `close_connections_on_host_health_failure: ${lb.closeConnectionsOnHostHealthFailure}`,
      why: !lb.closeConnectionsOnHostHealthFailure
        ? 'connections survive ejection, which health-first relies on'
        : lb.upstreamProtocol === 'tcp'
          ? 'ejection closes the tcp_proxy connections: health fails only after in-flight reached 0'
          : 'acts on tcp_proxy connections only: HTTP connections survive ejection anyway (finding envoy-close-connections-not-http)',
    },
  ];
  return [...header('Envoy cluster (in-mesh LB)', input), ...withTrailingComments(lines), ''].join('\n');
}

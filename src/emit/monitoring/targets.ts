/**
 * What every Prometheus file synth writes agrees on: which pods, which ports, and the job label
 * their series carry. The rules and the dashboard select by that job, so they read only what the
 * PodMonitor (or the scrape job) collected, never a second copy from another scrape of the pods.
 */
import { Duration } from '../../core/duration';
import type { Plan } from '../../plan/plan-gateway';
import { ENVOY_PROMETHEUS_PORT_NAME, HC_CONTAINER_NAME, HC_METRICS_PORT_NAME, objectNames, podSelectorLabels } from '../../pod/names';

/**
 * The Envoy series the rules and the dashboard read, kept from Envoy's /stats/prometheus (15090).
 * Istio's stats tags (istio/istio tools/packaging/common/envoy_bootstrap.json) turn
 * `http.outbound_0.0.0.0_8080;.downstream_rq_5xx` into
 * `envoy_http_downstream_rq{http_conn_manager_prefix="outbound_0.0.0.0_8080",response_code_class="5xx"}`
 * (the whole `_5xx` is the tag; Envoy's default tags would leave `downstream_rq_xx`): names read from a
 * real Envoy with Istio's tags in test/emit/monitoring/istio-stats-matcher.test.ts.
 */
export const ENVOY_SERIES = ['envoy_http_downstream_rq', 'envoy_http_downstream_cx_destroy_remote_active_rq'] as const;

export interface MonitoringTargets {
  readonly gateway: string;
  readonly namespace: string;
  /** The PodMonitor's, PrometheusRule's and scrape job's name. */
  readonly name: string;
  /** `job` of every series scraped: `<namespace>/<name>`, as the Prometheus Operator names a PodMonitor's job. */
  readonly job: string;
  readonly selectorLabels: Readonly<Record<string, string>>;
  readonly metricsPortName: string;
  readonly envoyPortName: string;
  readonly sidecarContainer: string;
  readonly scrapeInterval: string;
  /** PromQL label matchers selecting this gateway's series (`job="…"`). */
  readonly matcher: string;
}

export function monitoringTargets(plan: Plan): MonitoringTargets {
  const { name: gateway, namespace } = plan.gateway;
  const name = objectNames(gateway).monitoring;
  const job = `${namespace}/${name}`;
  return {
    gateway,
    namespace,
    name,
    job,
    // istiod labels a Gateway API gateway's pods by the Gateway's name, not app/istio.
    selectorLabels: podSelectorLabels(plan.chart.kind, gateway),
    metricsPortName: HC_METRICS_PORT_NAME,
    envoyPortName: ENVOY_PROMETHEUS_PORT_NAME,
    sidecarContainer: HC_CONTAINER_NAME,
    scrapeInterval: Duration.seconds(plan.observability.scrapeInterval).inWholeUnits(),
    matcher: `job="${job}"`,
  };
}

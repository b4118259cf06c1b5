/**
 * The observability files synth writes, by `spec.observability.prometheus` (docs/observability.md):
 * the scrape (a PodMonitor or a plain scrape job), the alerts (a PrometheusRule or a rule file)
 * and a Grafana dashboard; nothing with `none`.
 */
import type { Plan } from '../../plan/plan-gateway';
import { grafanaDashboardJson } from './grafana-dashboard';
import { podMonitorYaml, prometheusRuleYaml, ruleFileYaml, scrapeConfigYaml } from './prometheus-files';

export const MONITORING_FILES = {
  podMonitor: 'pod-monitor.yaml',
  rules: 'prometheus-rules.yaml',
  scrapeConfig: 'prometheus-scrape.yaml',
  dashboard: 'grafana-dashboard.json',
} as const;

export function monitoringFiles(plan: Plan): Record<string, string> {
  switch (plan.observability.prometheus) {
    case 'operator':
      return {
        [MONITORING_FILES.podMonitor]: podMonitorYaml(plan),
        [MONITORING_FILES.rules]: prometheusRuleYaml(plan),
        [MONITORING_FILES.dashboard]: grafanaDashboardJson(plan),
      };
    case 'scrape-config':
      return {
        [MONITORING_FILES.scrapeConfig]: scrapeConfigYaml(plan),
        [MONITORING_FILES.rules]: ruleFileYaml(plan),
        [MONITORING_FILES.dashboard]: grafanaDashboardJson(plan),
      };
    case 'none':
      return {};
  }
}

/**
 * The gateways Argo CD delivers, and the repository that holds them, laid out as gracegate's
 * README and docs/delivery.md describe (one directory a gateway, `gateways/<namespace>/<gateway>/`
 * with its `gracegate.yaml`):
 *   - found by discovery, no parameters: the app directory is itself the istio/gateway chart (the
 *     plugin renders the app directory when it holds a Chart.yaml), its values.yaml carrying the
 *     lab's values;
 *   - by name, with parameters: the chart in `charts/gateway`, named by the `chart` parameter, the
 *     lab's string values as the `set` parameter (--set-string) and its typed one (autoscaling
 *     off) in a values file beside the spec, named by `values-files`.
 * The lab's values: the proxy image `auto` pulled IfNotPresent (nothing is pulled here), the
 * gateway Service a NodePort (no load-balancer controller: Argo CD calls a LoadBalancer Service
 * without an address Progressing), the chart's HPA off (the spec sets the replicas).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify as yamlStringify } from 'yaml';
import { LB_SETTINGS } from '../../harness/scenario';
import { chartDir } from '../charts';
import { clusterSpec, type GatewayOptions } from '../gateway';
import { STATIC_NODE_PORTS } from '../layout';
import type { AppSource } from './apps';
import type { Change } from './git-server';

export const PLUGIN_NAME = 'gracegate-v0.1.0';

export type ArgoGateway = AppSource & { key: string; title: string; options: GatewayOptions; specPath: string };

const LAB_VALUES = { imagePullPolicy: 'IfNotPresent', 'service.type': 'NodePort' };
/** The lab's typed value: `set` passes strings (--set-string), and the chart wants a boolean. */
const LAB_VALUES_FILE = 'values-lab.yaml';
const LAB_VALUES_FILE_TEXT = 'autoscaling:\n  enabled: false\n';

function gateway(key: string, title: string, options: Omit<GatewayOptions, 'namespace' | 'name' | 'replicas'>, plugin?: AppSource['plugin']): ArgoGateway {
  const namespace = `ac-${key}`;
  const path = `gateways/${namespace}/igw`;
  return {
    key,
    title,
    name: `igw-${key}`,
    namespace,
    path,
    specPath: `${path}/gracegate.yaml`,
    options: { ...options, namespace, name: 'igw', replicas: 2 },
    ...(plugin ? { plugin } : {}),
  };
}

export const DISCOVERED = gateway('discovered', 'found by discovery, no parameters', {
  setting: LB_SETTINGS.zeroExcuse,
  chart: '1.27.9',
  healthNodePort: STATIC_NODE_PORTS.argocd,
});

export const NAMED = gateway(
  'named',
  `plugin ${PLUGIN_NAME} by name, with parameters`,
  { setting: LB_SETTINGS.noFlush, chart: '1.31', healthNodePort: STATIC_NODE_PORTS.argocd + 1 },
  {
    name: PLUGIN_NAME,
    parameters: [
      { name: 'chart', string: '../../../charts/gateway' },
      { name: 'values-files', array: [LAB_VALUES_FILE] },
      { name: 'set', map: LAB_VALUES },
    ],
  },
);

export const GATEWAYS = [DISCOVERED, NAMED] as const;

/** The gateway's spec: the cluster's lab spec (test/proof/cluster/gateway.ts), with `specPatch` merged into spec.spec. */
export const specOf = (g: ArgoGateway, specPatch: Record<string, unknown> = {}): Record<string, unknown> =>
  clusterSpec({ ...g.options, specPatch: { ...g.options.specPatch, ...specPatch } });

export const specText = (spec: Record<string, unknown>): string => yamlStringify(spec);

/** The files of the gateway's directory (and the shared chart), as a first commit. */
export function seedFiles(g: ArgoGateway): Record<string, Change> {
  if (!g.plugin) {
    const chart = chartDir(g.options.chart);
    const labValues =
      "\n# The lab's values (nothing is pulled on the test cluster, which has no load-balancer controller):\nimagePullPolicy: IfNotPresent\nservice:\n  type: NodePort\nautoscaling:\n  enabled: false\n";
    return {
      [g.path]: { copy: chart },
      [`${g.path}/values.yaml`]: readFileSync(join(chart, 'values.yaml'), 'utf8') + labValues,
      [g.specPath]: specText(specOf(g)),
    };
  }
  return { 'charts/gateway': { copy: chartDir(g.options.chart) }, [g.specPath]: specText(specOf(g)), [`${g.path}/${LAB_VALUES_FILE}`]: LAB_VALUES_FILE_TEXT };
}

/**
 * A gateway on the cluster, installed from a spec the way a user would: `gracegate synth`, then the
 * istio/gateway chart with real helm and the values overlay, `kubectl apply` of manifests.yaml, and
 * the route to the test app; and its removal. Each gateway has a namespace of its own.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, parse as parseYaml, stringify as yamlStringify } from 'yaml';
import { planGateway, type Plan } from '../../../src/plan/plan-gateway';
import { HC_CONFIG_KEY, objectNames } from '../../../src/pod/names';
import { resolveGatewaySpec } from '../../../src/schema/parse-spec';
import { REPO_ROOT } from '../../support/repo';
import { labSpec, type LbSetting } from '../harness/scenario';
import { gatewayRouteManifests, testAppManifests } from './addons';
import { chartDir } from './charts';
import { deleteNamespacesNow, helm, waitNamespacesGone, kubectl, kubectlApply, kubectlJson } from './kubectl';
import { NODES, OUTSIDE } from './layout';
import { createGatewayNamespace } from './pod-security';
import { run, waitUntil } from './sh';

export type ChartVersion = '1.27.9' | '1.31';

export type GatewayOptions = {
  /** The namespace, and the gateway's (release's) name in it. */
  namespace: string;
  name: string;
  setting: LbSetting;
  replicas: number;
  /** The health Service's NodePort (one a gateway: namespaces run one after another, but ports outlive a namespace briefly). */
  healthNodePort: number;
  chart: ChartVersion;
  /** spec.health.service: the health port on the gateway's own Service, or a health Service of its own (omitted: the plan chooses). */
  healthPortOn?: 'gateway' | 'own';
  hcSidecar?: 'native' | 'container';
  autoscaling?: { minReplicas: number; maxReplicas: number };
  /** Extra spec fields merged into spec.spec (shallow). */
  specPatch?: Record<string, unknown>;
  /** Lab only: the gateway Service's externalTrafficPolicy, set beside the overlay (to measure both). */
  trafficPolicy?: 'Cluster' | 'Local';
  /** Lab only: fields merged into the sidecar's config (the hc ConfigMap of manifests.yaml), to measure what the plan's values change. */
  hcConfigPatch?: Record<string, unknown>;
};

/**
 * Who the gateways' NetworkPolicy admits on this cluster (kube-router enforces it): HAProxy and
 * Prometheus run in the outside namespace, and its address reaches the pods as it is (the health
 * NodePort keeps the client address with externalTrafficPolicy Local; Prometheus scrapes the pod
 * IPs, routed through the node).
 */
export const CLUSTER_NETWORK_POLICY = { lbSourceRanges: [`${OUTSIDE.ip}/32`], metrics: { sourceRanges: [`${OUTSIDE.ip}/32`] } } as const;

/**
 * The lab spec (test/proof/harness/scenario.ts labSpec: compressed time, p99 2 s, drain timeout 3 s)
 * placed on the cluster: three nodes, the health Service as a NodePort the LB probes on every node,
 * Kubernetes 1.34 unless a native sidecar is asked for (1.33).
 */
export function clusterSpec(o: GatewayOptions): Record<string, unknown> {
  const spec = labSpec(o.setting, o.replicas, o.hcSidecar ?? 'container', o.autoscaling) as {
    metadata: Record<string, unknown>;
    spec: Record<string, unknown>;
  };
  spec.metadata = { name: o.name, namespace: o.namespace };
  // kube-proxy runs here, at its defaults: the spec's too (the lab's loopback spec has none).
  const { kubeProxy: _loopback, ...lab } = spec.spec;
  spec.spec = {
    ...lab,
    nodes: NODES.length,
    chart: { kind: 'istio-gateway', version: o.chart === '1.31' ? '1.31.0' : o.chart },
    health: { exposure: 'nodePort', port: 18180, nodePort: o.healthNodePort, ...(o.healthPortOn ? { service: o.healthPortOn } : {}) },
    networkPolicy: CLUSTER_NETWORK_POLICY,
    ...o.specPatch,
  };
  return spec;
}

export type Installed = {
  options: GatewayOptions;
  dir: string;
  specFile: string;
  /** The gateway Service's NodePort for port 80 (what the LB sends traffic to). */
  trafficNodePort: number;
  /** The health Service's name; null where the plan puts the health port on the gateway's own Service. */
  healthService: string | null;
  /** The pods' labels (the chart's: app and istio = the release name). */
  selector: string;
};

const GRACEGATE = join(REPO_ROOT, 'bin/gracegate.js');

export function gracegate(args: string[]): string {
  return run(process.execPath, [GRACEGATE, ...args], { timeoutMs: 60_000 });
}

/** Installs the gateway from its spec through the values overlay (helm 3); resolves when its pods are Ready. */
export async function installGateway(o: GatewayOptions): Promise<Installed> {
  const dir = mkdtempSync(join(tmpdir(), `gracegate-${o.namespace}-`));
  const specFile = join(dir, 'gateway.yaml');
  writeFileSync(specFile, yamlStringify(clusterSpec(o)));
  const out = join(dir, 'synth');
  mkdirSync(out);
  gracegate(['synth', specFile, '--out', out]);
  createGatewayNamespace(o.namespace);
  try {
    return await installInto(o, dir, specFile, out);
  } catch (err) {
    await uninstallGateway({ options: o, dir, specFile, trafficNodePort: 0, healthService: null, selector: '' });
    throw err;
  }
}

async function installInto(o: GatewayOptions, dir: string, specFile: string, out: string): Promise<Installed> {
  kubectlApply(testAppManifests(o.namespace));
  kubectlApply(withHcConfigPatch(readFileSync(join(out, 'manifests.yaml'), 'utf8'), o.hcConfigPatch));
  // The lab's only value: image `auto` has no tag, so the kubelet would pull it Always; nothing is pulled here.
  writeFileSync(join(dir, 'lab.yaml'), `imagePullPolicy: IfNotPresent\n${o.trafficPolicy ? `service:\n  externalTrafficPolicy: ${o.trafficPolicy}\n` : ''}`);
  helm(['install', o.name, chartDir(o.chart), '-n', o.namespace, '-f', join(out, 'values-overlay.yaml'), '-f', join(dir, 'lab.yaml')], { helm: 'v31' });
  kubectlApply(gatewayRouteManifests(o.namespace, o.name, { istio: o.name }, o.namespace));
  kubectl(['-n', o.namespace, 'rollout', 'status', `deployment/${o.name}`, '--timeout=120s'], { timeoutMs: 130_000 });
  if (o.autoscaling) {
    // The Deployment starts with one pod; the HPA raises it to its minimum (no metrics needed for that).
    const min = o.autoscaling.minReplicas;
    await waitUntil(
      `the HPA to scale ${o.namespace}/${o.name} to ${min}`,
      120_000,
      () => {
        const d = kubectlJson<{ spec: { replicas?: number } }>(['-n', o.namespace, 'get', 'deployment', o.name]);
        return d.spec.replicas === min ? true : undefined;
      },
      1000,
    );
    kubectl(['-n', o.namespace, 'rollout', 'status', `deployment/${o.name}`, '--timeout=120s'], { timeoutMs: 130_000 });
  }
  kubectl(['-n', o.namespace, 'rollout', 'status', 'deployment/testapp', '--timeout=60s'], { timeoutMs: 70_000 });
  const svc = kubectlJson<{ spec: { ports: Array<{ port: number; nodePort?: number }> } }>(['-n', o.namespace, 'get', 'service', o.name]);
  const trafficNodePort = svc.spec.ports.find((p) => p.port === 80)?.nodePort;
  if (!trafficNodePort) throw new Error(`service ${o.namespace}/${o.name} has no NodePort for port 80`);
  // No health Service where the plan puts the health port on the gateway's own Service (pod-changes.ts).
  const healthService = planOf({ specFile }).healthProbe.via === 'gateway-service' ? null : objectNames(o.name).healthService;
  return { options: o, dir, specFile, trafficNodePort, healthService, selector: `app=${o.name},istio=${o.name}` };
}

/** manifests.yaml with `patch` merged (shallowly) into the hc ConfigMap's config; unchanged without one. */
function withHcConfigPatch(manifests: string, patch: Record<string, unknown> | undefined): string {
  if (!patch) return manifests;
  return parseAllDocuments(manifests)
    .map((d) => {
      const o = d.toJSON() as { kind?: string; data?: Record<string, string> } | null;
      if (o?.kind !== 'ConfigMap' || o.data?.[HC_CONFIG_KEY] === undefined) return d.toString();
      o.data[HC_CONFIG_KEY] = `${JSON.stringify({ ...(JSON.parse(o.data[HC_CONFIG_KEY]) as object), ...patch }, null, 2)}\n`;
      return yamlStringify(o);
    })
    .join('---\n');
}

/** `gracegate lb-config` for the gateway, one server a node (the traffic NodePort; probes on the health NodePort). */
export function lbConfig(g: Installed): string {
  return gracegate(['lb-config', g.specFile, '--backend-name', 'gateway', '--servers', NODES.map((n) => `${n.ip}:${g.trafficNodePort}`).join(',')]);
}

export type LivePod = { name: string; uid: string; node: string; ready: boolean; deleting: boolean };

type PodList = {
  items: Array<{
    metadata: { name: string; uid: string; deletionTimestamp?: string };
    spec: { nodeName?: string };
    status: { conditions?: Array<{ type: string; status: string }> };
  }>;
};

export function gatewayPods(g: Installed): LivePod[] {
  return kubectlJson<PodList>(['-n', g.options.namespace, 'get', 'pods', '-l', g.selector]).items.map((p) => ({
    name: p.metadata.name,
    uid: p.metadata.uid,
    node: p.spec.nodeName ?? '',
    ready: p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    deleting: p.metadata.deletionTimestamp !== undefined,
  }));
}

/** The LB's server name for a node (lb-config numbers servers in --servers order). */
export function serverOf(node: string): string {
  const i = NODES.findIndex((n) => n.name === node);
  if (i < 0) throw new Error(`no node ${node}`);
  return `gw-${i + 1}`;
}

/** The node of an LB server name (serverOf's reverse); undefined for a name that is no node's. */
export function nodeOfServer(server: string): string | undefined {
  return NODES[Number(/^gw-(\d+)$/.exec(server)?.[1] ?? 0) - 1]?.name;
}

/** The plan gracegate makes of the gateway's spec file. */
export function planOf(g: Pick<Installed, 'specFile'>): Plan {
  return planGateway(resolveGatewaySpec(parseYaml(readFileSync(g.specFile, 'utf8')) as Record<string, unknown>, g.specFile));
}

/** Waits until `count` gateway pods are Ready and none is terminating. */
export async function waitSettled(g: Installed, count: number, timeoutMs = 120_000): Promise<LivePod[]> {
  return waitUntil(
    `${count} Ready gateway pods in ${g.options.namespace}`,
    timeoutMs,
    () => {
      const pods = gatewayPods(g);
      return pods.length === count && pods.every((p) => p.ready && !p.deleting) ? pods : undefined;
    },
    500,
  );
}

/**
 * Removes the gateway's namespace (the release and everything it made are namespaced), its pods
 * without their grace periods: the terminations under test ran before, and pods left to run their
 * sequences would hold the nodes' CPU requests and cores while the next session starts. Waits
 * until the namespace is gone.
 */
export async function uninstallGateway(g: Installed): Promise<void> {
  const ns = g.options.namespace;
  deleteNamespacesNow([ns]);
  rmSync(g.dir, { recursive: true, force: true });
  await waitNamespacesGone(`namespace ${ns}`, [ns], 120_000);
}

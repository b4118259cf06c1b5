/**
 * The termination proof on the real cluster, as data: each session installs one gateway (a
 * sequence behind its HAProxy setting, a chart, a pod layout), puts a real HAProxy running
 * lb-config's output in front, and runs its actions one after another under load. The tests
 * (sequences.test.ts) and the report (report-main.ts) run the same definitions.
 */
import { LB_SETTINGS, type LbSetting } from '../harness/scenario';
import { lossProblems, runSequenceProblems } from '../harness/expect';
import { applyArticleOrder } from './article-order';
import { installGateway, planOf, uninstallGateway, type ChartVersion, type GatewayOptions, type Installed } from './gateway';
import { kubectl, kubectlJson } from './kubectl';
import { STATIC_NODE_PORTS } from './layout';
import { startLb, stopLb, terminationUnderLoad, type ClusterAction, type ClusterRun } from './termination';
import { summarize, type RunSummary } from './results';

export type Session = {
  key: string;
  setting: LbSetting;
  chart: ChartVersion;
  replicas: number;
  autoscaling?: { minReplicas: number; maxReplicas: number };
  hcSidecar?: 'native' | 'container';
  /** `article`: the contrast, the source article's order on the same pods (article-order.ts). */
  order?: 'gracegate' | 'article';
  /**
   * The report's measurements of what the planner changed after the first cluster runs, on the
   * same pods: the hc's preStop as `exec gracegate drain` (before the httpGet), the gateway
   * Service back at externalTrafficPolicy Cluster (before Local). Measured, not asserted.
   */
  variant?: 'hc-exec-prestop' | 'traffic-policy-cluster';
  actions: ClusterAction[];
};

/** The report's extra sessions (report-main.ts): each changes one thing of the plan's output back. */
export const VARIANT_SESSIONS: Session[] = [
  { key: 'variant-hc-exec', setting: LB_SETTINGS.flushRedispatch, chart: '1.27.9', replicas: 2, variant: 'hc-exec-prestop', actions: ['delete', 'rollout'] },
  {
    key: 'variant-cluster-policy',
    setting: LB_SETTINGS.flushRedispatch,
    chart: '1.27.9',
    replicas: 2,
    variant: 'traffic-policy-cluster',
    actions: ['delete', 'delete'],
  },
];

export const SESSIONS: Session[] = [
  { key: 'drain-first', setting: LB_SETTINGS.flushRedispatch, chart: '1.27.9', replicas: 2, actions: ['delete', 'evict', 'rollout'] },
  { key: 'health-first', setting: LB_SETTINGS.noFlush, chart: '1.31', replicas: 2, actions: ['delete', 'scale'] },
  {
    key: 'soft-drain-hpa',
    setting: LB_SETTINGS.zeroExcuse,
    chart: '1.27.9',
    replicas: 2,
    autoscaling: { minReplicas: 2, maxReplicas: 3 },
    actions: ['delete', 'hpa'],
  },
  { key: 'native-sidecar', setting: LB_SETTINGS.disableOn404, chart: '1.31', replicas: 2, hcSidecar: 'native', actions: ['delete', 'rollout'] },
  { key: 'article-order', setting: LB_SETTINGS.flushRedispatch, chart: '1.27.9', replicas: 2, order: 'article', actions: ['delete'] },
];

/**
 * Each session's health NodePort: distinct, so a namespace still going away never holds the next
 * one's, and in the range's static band (test/proof/cluster/layout.ts STATIC_NODE_PORTS).
 */
const HEALTH_NODE_PORT_BASE = STATIC_NODE_PORTS.sessions;
/** Each session's HAProxy port in the outside namespace, distinct for the same reason. */
const LB_PORT_BASE = 8100;

/** A lab gateway of a session (this file's or another's): its own namespace `gg-<key>`, gateway `igw`. */
export function labGatewayOptions(
  s: Pick<Session, 'key' | 'setting' | 'replicas' | 'chart'>,
  healthNodePort: number,
  extra: Partial<GatewayOptions> = {},
): GatewayOptions {
  return { namespace: `gg-${s.key}`, name: 'igw', setting: s.setting, replicas: s.replicas, healthNodePort, chart: s.chart, ...extra };
}

export function gatewayOptions(s: Session, index: number): GatewayOptions {
  return labGatewayOptions(s, HEALTH_NODE_PORT_BASE + index, {
    ...(s.hcSidecar ? { hcSidecar: s.hcSidecar } : {}),
    ...(s.autoscaling ? { autoscaling: s.autoscaling } : {}),
  });
}

/** The hc's probes on a live pod, as the API server keeps them after istiod's injection. */
export type LiveHcProbes = { pod: string; readiness: string | null; liveness: string | null };

export type SessionOutcome = {
  session: Session;
  /** Each gateway pod's hc probes right after the install (`path port` of each httpGet). */
  hcProbes: LiveHcProbes[];
  runs: Array<{ run: ClusterRun; summary: RunSummary; problems: string[] }>;
};

type ProbeJson = { httpGet?: { path?: string; port?: unknown } };
type ContainerJson = { name: string; readinessProbe?: ProbeJson; livenessProbe?: ProbeJson };
type PodsJson = { items: Array<{ metadata: { name: string }; spec: { containers: ContainerJson[]; initContainers?: ContainerJson[] } }> };

function liveHcProbes(g: Installed): LiveHcProbes[] {
  const text = (p: ProbeJson | undefined): string | null => (p?.httpGet ? `${p.httpGet.path} ${String(p.httpGet.port)}` : null);
  return kubectlJson<PodsJson>(['-n', g.options.namespace, 'get', 'pods', '-l', g.selector]).items.map((p) => {
    // A native sidecar hc is an init container (restartPolicy Always).
    const hc = [...(p.spec.initContainers ?? []), ...p.spec.containers].find((c) => c.name === 'gracegate-hc');
    return { pod: p.metadata.name, readiness: text(hc?.readinessProbe), liveness: text(hc?.livenessProbe) };
  });
}

/**
 * Runs a session: what each action's run shows the plan does not account for (`problems`: a
 * gracegate run has none; the contrast must lose, so its problem is losing nothing).
 */
export async function runSession(s: Session, index: number, onRun: (r: ClusterRun, problems: string[]) => void = () => {}): Promise<SessionOutcome> {
  const g = await installGateway(gatewayOptions(s, index));
  const out: SessionOutcome = { session: s, hcProbes: liveHcProbes(g), runs: [] };
  let lb: Awaited<ReturnType<typeof startLb>> | undefined;
  try {
    const plan = planOf(g);
    if (s.order === 'article') applyArticleOrder(g, plan);
    if (s.variant) applyVariant(g, s.variant);
    lb = await startLb(g, LB_PORT_BASE + index);
    for (const action of s.actions) {
      const run = await terminationUnderLoad(g, lb, action, s.order === 'article' ? 'seed' : 'gracegate');
      const problems = s.variant
        ? []
        : s.order === 'article'
          ? run.run.result.failureTotal === 0
            ? ['the article order lost nothing: the contrast cannot tell a working sequence from a broken one']
            : []
          : [...lossProblems(run.run), ...runSequenceProblems(run.run)];
      out.runs.push({ run, summary: summarize(s, run), problems });
      onRun(run, problems);
    }
  } finally {
    if (lb) await stopLb(lb);
    await uninstallGateway(g);
  }
  return out;
}

/** Puts one field of gracegate's output back as it was before the cluster runs (report only). */
function applyVariant(g: Installed, variant: NonNullable<Session['variant']>): void {
  const ns = g.options.namespace;
  if (variant === 'hc-exec-prestop') {
    const hook = { httpGet: null, exec: { command: ['gracegate', 'drain', '--config', '/etc/gracegate/hc.json'] } };
    const patch = { spec: { template: { spec: { containers: [{ name: 'gracegate-hc', lifecycle: { preStop: hook } }] } } } };
    kubectl(['-n', ns, 'patch', 'deployment', g.options.name, '--type', 'strategic', '-p', JSON.stringify(patch)]);
    kubectl(['-n', ns, 'rollout', 'status', `deployment/${g.options.name}`, '--timeout=120s'], { timeoutMs: 130_000 });
  } else {
    kubectl(['-n', ns, 'patch', 'service', g.options.name, '--type', 'merge', '-p', JSON.stringify({ spec: { externalTrafficPolicy: 'Cluster' } })]);
  }
}

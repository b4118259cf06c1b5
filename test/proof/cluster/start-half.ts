/**
 * The start half of a rollout on the real cluster (issue 50): a gateway behind HAProxy at its most
 * eager (rise 1), rolled again and again under load with kube-proxy at its defaults, every new pod's
 * timeline witnessed (arrivals.ts) and every failed request assigned to a half and a cause.
 */
import { LB_SETTINGS, type LbSetting } from '../harness/scenario';
import { lossProblems, runSequenceProblems } from '../harness/expect';
import type { AssignedFailure, ArrivalTimeline } from './arrivals';
import { installGateway, uninstallGateway, type ChartVersion, type GatewayOptions } from './gateway';
import { STATIC_NODE_PORTS } from './layout';
import { startLb, stopLb, terminationUnderLoad, type ClusterAction } from './termination';

/** One start-half session: a gateway, an LB setting, and the actions run one after another. */
export type StartHalfSession = {
  key: string;
  setting: LbSetting;
  chart: ChartVersion;
  replicas: number;
  actions: ClusterAction[];
  /** Extra spec fields (merged into spec.spec). */
  specPatch?: Record<string, unknown>;
};

/** HAProxy at its most eager: one good check and the node is UP (the lab's other settings as they are). */
export const eager = (s: LbSetting, extra: Record<string, unknown> = {}): LbSetting => ({
  label: `${s.label}, rise 1${Object.entries(extra)
    .map(([k, v]) => `, ${k} ${String(v)}`)
    .join('')}`,
  lb: { ...s.lb, rise: 1, ...extra },
});

export const START_HALF_SESSIONS: StartHalfSession[] = [
  { key: 'start-drain-first', setting: eager(LB_SETTINGS.flushRedispatch), chart: '1.27.9', replicas: 2, actions: ['rollout', 'rollout', 'rollout'] },
  {
    key: 'start-drain-first-retries0',
    setting: eager(LB_SETTINGS.flushRedispatch, { retries: 0 }),
    chart: '1.27.9',
    replicas: 2,
    actions: ['rollout', 'rollout', 'rollout'],
  },
];

export type StartHalfRun = {
  session: string;
  action: ClusterAction;
  lbSetting: string;
  requests: number;
  failures: AssignedFailure[];
  arrivals: ArrivalTimeline[];
  /** What the termination half's checks found (harness/expect.ts). */
  terminationProblems: string[];
  settledMs: number;
};

/** The lab's port bands: this file's health NodePorts and HAProxy ports. */
const HEALTH_NODE_PORT_BASE = STATIC_NODE_PORTS.startHalf;
const LB_PORT_BASE = 8200;

export function startHalfOptions(s: StartHalfSession, index: number): GatewayOptions {
  return {
    namespace: `gg-${s.key}`,
    name: 'igw',
    setting: s.setting,
    replicas: s.replicas,
    healthNodePort: HEALTH_NODE_PORT_BASE + index,
    chart: s.chart,
    ...(s.specPatch ? { specPatch: s.specPatch } : {}),
  };
}

/** Runs a session's actions under load; `onRun` sees each run as it ends. */
export async function runStartHalf(s: StartHalfSession, index: number, onRun: (r: StartHalfRun) => void = () => {}): Promise<StartHalfRun[]> {
  const g = await installGateway(startHalfOptions(s, index));
  const out: StartHalfRun[] = [];
  let lb: Awaited<ReturnType<typeof startLb>> | undefined;
  try {
    lb = await startLb(g, LB_PORT_BASE + index);
    for (const action of s.actions) {
      const run = await terminationUnderLoad(g, lb, action);
      const r: StartHalfRun = {
        session: s.key,
        action,
        lbSetting: s.setting.label,
        requests: run.run.records.length,
        failures: run.failures,
        arrivals: run.arrivals,
        terminationProblems: [...lossProblems(run.run), ...runSequenceProblems(run.run)],
        settledMs: run.settledMs,
      };
      out.push(r);
      onRun(r);
    }
  } finally {
    if (lb) await stopLb(lb);
    await uninstallGateway(g);
  }
  return out;
}

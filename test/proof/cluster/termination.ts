/**
 * One termination on the real cluster under load, and its proof. The LB is a real HAProxy in the
 * outside namespace running `gracegate lb-config`'s output untouched: it probes every node's health
 * NodePort and sends traffic to every node's gateway NodePort. The action is what a user does:
 * `kubectl delete pod`, the Eviction API (with the PodDisruptionBudget in force), `kubectl rollout
 * restart`, `kubectl scale`, a lowered HPA range, or a commit to the gateway's spec that Argo CD
 * syncs (the caller's `sync`). The witnesses are the sidecar's state file, the
 * kubelet's and containerd's records, HAProxy's log and the EndpointSlices over time
 * (witnesses.ts); the run is held to the plan with the same checks as the harness (e2e/harness/expect.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Plan } from '../../../src/plan/plan-gateway';
import type { PersistedState } from '../../../src/hc/types';
import { failuresByKind, type RequestRecord } from '../../../src/verify/load';
import { MIXED } from '../../../src/verify/mixes';
import { upAgain } from '../harness/expect';
import { machineStops } from '../harness/machine-stops';
import { Haproxy, relaySlackMs, type RequestLogLine } from '../harness/haproxy';
import type { ScenarioResult, SequenceProof, Termination } from '../harness/result';
import { SEQUENCE_LABEL, sidecarMarks, type LbEvent, type ScenarioRun } from '../harness/scenario';
import type { TerminationLog } from '../harness/terminations';
import { gatewayPods, lbConfig, planOf, serverOf, waitSettled, type Installed, type LivePod } from './gateway';
import { kubectl, kubectlJson } from './kubectl';
import { NODES, OUTSIDE } from './layout';
import { ClusterLoad } from './load';
import { arrivalTimelines, assignFailures, type ArrivalTimeline, type AssignedFailure, type LeavingSpan } from './arrivals';
import { netnsPrefix, sleep, waitUntil } from './sh';
import { PodWatch, RuleWatch } from './start-witnesses';
import {
  containerRecords,
  CpuWatch,
  podContainers,
  podEvents,
  PodFiles,
  SliceWatch,
  type ContainerRecord,
  type LogLine,
  type PodContainers,
  type SliceSample,
} from './witnesses';

export type ClusterAction = 'delete' | 'evict' | 'rollout' | 'scale' | 'scale-up' | 'hpa' | 'sync';

export const ACTION_LABEL: Record<ClusterAction, string> = {
  delete: 'kubectl delete pod',
  evict: 'eviction (Eviction API, PodDisruptionBudget in force)',
  rollout: 'kubectl rollout restart (every pod replaced)',
  scale: 'kubectl scale (one pod fewer)',
  'scale-up': 'kubectl scale (one pod more, onto the node that had none)',
  hpa: 'HPA scale-down (maxReplicas lowered)',
  sync: 'a commit to the spec, synced by Argo CD (every pod replaced)',
};

/** The LB in front of a gateway: HAProxy in the outside namespace, lb-config's backend untouched. */
export async function startLb(g: Installed, port = 8080): Promise<{ lb: Haproxy; dir: string; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gracegate-lb-'));
  const lb = await Haproxy.start(dir, lbConfig(g), 'gateway', { prefix: netnsPrefix(OUTSIDE.netns), bind: '127.0.0.1', port });
  return { lb, dir, url: `http://127.0.0.1:${port}` };
}

export async function stopLb(l: { lb: Haproxy; dir: string }): Promise<void> {
  await l.lb.stop();
  rmSync(l.dir, { recursive: true, force: true });
}

/** Waits until HAProxy has every node with a Ready gateway pod UP and every other node DOWN. */
export async function waitLbMatchesPods(g: Installed, lb: Haproxy, timeoutMs = 60_000): Promise<void> {
  await waitUntil(
    'HAProxy to see each node with a gateway pod UP, the others DOWN',
    timeoutMs,
    async () => {
      const pods = gatewayPods(g).filter((p) => p.ready && !p.deleting);
      const withPod = new Set(pods.map((p) => serverOf(p.node)));
      const servers = (await lb.stats()).servers;
      return NODES.every((n) => {
        const s = servers.find((x) => x.name === serverOf(n.name));
        return s !== undefined && (withPod.has(s.name) ? /^UP/.test(s.status) : /^DOWN/.test(s.status));
      })
        ? true
        : undefined;
    },
    250,
  );
}

/**
 * What the LB's probe of each node can reach: the health Service's endpoints by node, or the gateway
 * Service's where the health port is on it (with externalTrafficPolicy Local, kube-proxy answers a
 * node's NodePort from its own endpoints only).
 */
export function healthEndpointsPerNode(g: Installed): Record<string, number> {
  const slices = kubectlJson<{ items: Array<{ endpoints?: Array<{ nodeName?: string }> }> }>([
    '-n',
    g.options.namespace,
    'get',
    'endpointslices',
    '-l',
    `kubernetes.io/service-name=${g.healthService ?? g.options.name}`,
  ]);
  const out: Record<string, number> = {};
  for (const e of slices.items.flatMap((s) => s.endpoints ?? [])) out[e.nodeName ?? '?'] = (out[e.nodeName ?? '?'] ?? 0) + 1;
  return out;
}

export type ClusterRun = {
  action: ClusterAction;
  run: ScenarioRun;
  /** The pods that left, with their containers' records and the EndpointSlices' view of them. */
  leaving: Array<{
    pod: LivePod;
    containers: ContainerRecord[];
    state: PersistedState | undefined;
    /** pilot-agent's and Envoy's log (istio-proxy), and the sidecar's. */
    proxyLog: LogLine[];
    hcLog: LogLine[];
    /** The hc container's CPU from before the action to its exit (cgroup cpuacct, CFS throttling). */
    hcCpu: { usageMs: number; throttledMs: number; throttledPeriods: number; overMs: number } | null;
    events: Array<{ reason: string; message: string; container: string | null }>;
  }>;
  slices: SliceSample[];
  /** When the action started (Date.now()): the run's times are ms after it. */
  t0: number;
  /** Eviction only: what the API server answered a second eviction while the first pod was leaving. */
  secondEviction?: string;
  /** When the load ended, ms after the action. */
  settledMs: number;
  /** Before the action: the health Service's endpoints on each node (what the LB's probe of that node reaches). */
  healthEndpoints: Record<string, number>;
  /** The start half: each new pod's timeline (arrivals.ts), ms after the action. */
  arrivals: ArrivalTimeline[];
  /** Every failed request with HAProxy's line for it, assigned to a half and a cause. */
  failures: AssignedFailure[];
  /** Each leaving pod's span on its node (absolute ms): from its preStop hooks to its last exit. */
  leavingSpans: LeavingSpan[];
};

/** POSTs an Eviction for `pod`: '' when the API server accepted it, else its refusal (HTTP status and reason). */
function evict(namespace: string, pod: string): string {
  const body = JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace } });
  try {
    kubectl(['create', '--raw', `/api/v1/namespaces/${namespace}/pods/${pod}/eviction`, '-f', '-'], { input: body });
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Waits until requests through the LB reach the test app: ten in a row answered 200 (istiod may
 * not have pushed the route yet when the pods are Ready, and Envoy answers 503 until it has).
 */
export async function waitRouteServes(url: string, timeoutMs = 60_000): Promise<void> {
  await waitUntil(
    `requests through the LB (${url}) answered by the test app`,
    timeoutMs,
    async () => {
      const probe = await ClusterLoad.start({
        baseUrl: url,
        workers: 1,
        mix: [{ weight: 1, spec: { kind: 'slow', ms: 0 } }],
        requestTimeoutMs: 2000,
        durationMs: 5000,
        maxRequests: 10,
      });
      const r = await probe.finish(10_000, false);
      return r.records.length === 10 && r.records.every((x) => x.outcome === 'ok') ? true : undefined;
    },
    500,
  );
}

/**
 * Runs `action` under load and collects its witnesses; the gateway must be settled (all pods
 * Ready). `sync` is what makes Argo CD replace the pods (a commit and a refresh), and the pods
 * leaving are held to the plan of `g.specFile` as it was when they started.
 */
export async function terminationUnderLoad(
  g: Installed,
  l: { lb: Haproxy; url: string },
  action: ClusterAction,
  termination: Termination = 'gracegate',
  sync?: () => void,
): Promise<ClusterRun> {
  if ((action === 'sync') !== (sync !== undefined)) throw new Error(`action ${action}: a sync callback goes with 'sync' only`);
  const ns = g.options.namespace;
  const before = await waitSettled(g, currentReplicas(g));
  await waitLbMatchesPods(g, l.lb);
  await waitRouteServes(l.url);
  const healthEndpoints = healthEndpointsPerNode(g);
  const containers = new Map<string, PodContainers>(before.map((p) => [p.name, podContainers(ns, p.name)]));
  const known = new Map<string, LivePod>(before.map((p) => [p.name, p]));
  const files = new PodFiles(() => [...known.values()].filter((p) => p.node !== '').map((p) => ({ ...p, namespace: ns })), ['istio-proxy', 'gracegate-hc']);
  // The hc's CPU over the termination (its preStop is a second Node process under the same limit).
  const cpu = new CpuWatch(() =>
    before.flatMap((p) => {
      const id = containers.get(p.name)?.containers.find((c) => c.name === 'gracegate-hc')?.id;
      return id ? [{ key: p.name, node: p.node, podUid: p.uid, containerId: id }] : [];
    }),
  );
  const slices = new SliceWatch(ns);
  // The start half's witnesses: the pods as the API server reports them, and each node's kube-proxy rules.
  const podWatch = new PodWatch(ns, g.selector);
  const rules = new RuleWatch(ns);
  const stopWatches = async (): Promise<void> => {
    slices.stop();
    podWatch.stop();
    await rules.stop();
  };
  const plan = planOf(g);
  const lbEventsFrom = l.lb.events.length;
  const lbLogFrom = l.lb.requestLog.length;
  const countersBefore = await l.lb.counters();
  const load = await ClusterLoad.start({ baseUrl: l.url, workers: 12, mix: MIXED, requestTimeoutMs: 15_000, durationMs: 180_000, mixKey: 7 });
  let secondEviction: string | undefined;
  let t0 = 0;
  try {
    await sleep(1500);
    t0 = Date.now();
    const name = g.options.name;
    const replicas = before.length;
    switch (action) {
      case 'delete':
        kubectl(['-n', ns, 'delete', 'pod', before[0]!.name, '--wait=false']);
        break;
      case 'evict': {
        const first = evict(ns, before[0]!.name);
        if (first !== '') throw new Error(`eviction of ${before[0]!.name} refused: ${first}`);
        // A second eviction now would leave fewer pods than the PodDisruptionBudget allows.
        secondEviction = evictAnswer(ns, before[1]!.name);
        break;
      }
      case 'rollout':
        kubectl(['-n', ns, 'rollout', 'restart', `deployment/${name}`]);
        break;
      case 'scale':
        kubectl(['-n', ns, 'scale', `deployment/${name}`, `--replicas=${replicas - 1}`]);
        break;
      case 'scale-up':
        kubectl(['-n', ns, 'scale', `deployment/${name}`, `--replicas=${replicas + 1}`]);
        break;
      case 'hpa':
        kubectl(['-n', ns, 'patch', 'hpa', name, '--type', 'merge', '-p', JSON.stringify({ spec: { minReplicas: replicas - 1, maxReplicas: replicas - 1 } })]);
        break;
      case 'sync':
        sync!();
        break;
    }
    // Follow the pods: new ones appear (the state poller watches them too), old ones leave.
    const expected = action === 'scale' || action === 'hpa' ? replicas - 1 : action === 'scale-up' ? replicas + 1 : replicas;
    await waitUntil(
      `${ACTION_LABEL[action]}: the leaving pods gone and ${expected} Ready`,
      240_000,
      () => {
        const pods = gatewayPods(g);
        // A new pod is first seen unscheduled: taken again once it has a node (its files are there).
        for (const p of pods) if (!known.has(p.name) || known.get(p.name)!.node === '') known.set(p.name, p);
        // A scale-up: nothing leaves (the new pod is the start half's alone).
        const oldLeft =
          action === 'scale-up'
            ? true
            : action === 'rollout' || action === 'sync'
              ? before.every((b) => !pods.some((p) => p.name === b.name))
              : pods.filter((p) => before.some((b) => b.name === p.name)).length <= replicas - 1;
        const ready = pods.filter((p) => p.ready && !p.deleting);
        return oldLeft && ready.length === expected && pods.length === expected ? true : undefined;
      },
      250,
    );
    await waitLbMatchesPods(g, l.lb, 60_000);
    await sleep(1000);
  } catch (err) {
    // Nothing of the run may outlive it: the load, the watch, the pollers.
    files.stop();
    cpu.stop();
    await stopWatches();
    await load.finish(5000).catch(() => undefined);
    throw err;
  }
  files.stop();
  cpu.stop();
  const settledMs = Date.now() - t0;
  const result = await load.finish();
  await stopWatches();
  const after = new Set(gatewayPods(g).map((p) => p.name));
  const left = before.filter((p) => !after.has(p.name));
  const leaving = left.map((pod) => ({
    pod,
    containers: containerRecords(containers.get(pod.name)!),
    state: files.state(pod.name),
    proxyLog: files.log(pod.name, 'istio-proxy'),
    hcLog: files.log(pod.name, 'gracegate-hc'),
    hcCpu: cpu.delta(pod.name),
    events: podEvents(ns, pod.name).map(({ reason, message, container }) => ({ reason, message, container })),
  }));
  const lbEvents = l.lb.events.slice(lbEventsFrom);
  const lbLog = l.lb.requestLog.slice(lbLogFrom);
  const countersAfter = await l.lb.counters();
  const counters = Object.fromEntries(
    Object.entries(countersAfter).map(([k, v]) => [k, v - countersBefore[k as keyof typeof countersBefore]]),
  ) as typeof countersAfter;
  const run = scenarioRun(g, plan, action, termination, t0, leaving, result.records, result.samples, lbEvents, lbLog, counters, l.lb.version);
  const arrivals = arrivalTimelines(
    {
      t0,
      trafficService: g.options.name,
      healthService: g.healthService,
      pods: podWatch,
      rules,
      slices: slices.samples,
      lbEvents,
      lbLog,
      hcState: (pod) => files.state(pod),
      hcLog: (pod) => files.log(pod, 'gracegate-hc'),
    },
    new Set(before.map((p) => p.name)),
  );
  const spans = leaving.map((l) => ({
    pod: l.pod.name,
    node: l.pod.node,
    fromMs: Math.min(...l.containers.map((c) => c.preStopStartMs ?? t0)),
    toMs: Math.max(...l.containers.map((c) => c.exitMs ?? Date.now())),
  }));
  const failures = assignFailures(result.records, lbLog, t0, spans, arrivals);
  return {
    action,
    run,
    leaving,
    slices: slices.samples,
    t0,
    ...(secondEviction !== undefined ? { secondEviction } : {}),
    settledMs,
    healthEndpoints,
    arrivals,
    failures,
    leavingSpans: spans,
  };
}

function evictAnswer(ns: string, pod: string): string {
  return evict(ns, pod) || 'accepted';
}

function currentReplicas(g: Installed): number {
  const d = kubectlJson<{ spec: { replicas?: number } }>(['-n', g.options.namespace, 'get', 'deployment', g.options.name]);
  return d.spec.replicas ?? 1;
}

type Leaving = ClusterRun['leaving'][number];

/** The harness's proof shape, from the cluster's witnesses. */
function proofOf(l: Leaving, plan: Plan, t0: number, lbEvents: LbEvent[], log: RequestLogLine[], records: RequestRecord[]): SequenceProof {
  const rel = (ms: number | null | undefined): number | null => (ms === null || ms === undefined ? null : ms - t0);
  const server = serverOf(l.pod.node);
  const p = l.state;
  const startMs = 0;
  const closed = p?.history.find((h) => h.state === 'CLOSED');
  const proxy = l.containers.find((c) => c.name === 'istio-proxy');
  const hc = l.containers.find((c) => c.name === 'gracegate-hc');
  const mine = lbEvents.filter((e) => e.server === server && e.atMs >= startMs);
  const proxyExit = proxy?.exitMs ?? null;
  const served = log.filter((x) => x.server === server && x.terminationState === '----' && (proxyExit === null || x.startMs <= proxyExit - t0));
  const hookFailed = (c: string): boolean => l.events.some((e) => e.reason === 'FailedPreStopHook' && e.container === c);
  return {
    pod: l.pod.name,
    server,
    sequence: `gracegate ${plan.sequence}`,
    startMs,
    graceMs: plan.timings.terminationGracePeriodSeconds * 1000,
    ...sidecarMarks(p, closed?.at, rel),
    // The kubelet does not read an httpGet hook's status: completed means an answer came. The
    // sidecar answers /wait-closed only at CLOSED (or at its own bound), which closedMs checks.
    waitClosed: proxy
      ? {
          status: proxy.preStopOutcome === 'completed' && !hookFailed('istio-proxy') ? 200 : null,
          atMs: (proxy.preStopEndMs ?? NaN) - t0,
          text: `kubelet: preStop ${proxy.preStopOutcome ?? 'not seen'}`,
        }
      : null,
    drainExit: hc
      ? {
          code: hc.preStopOutcome === 'completed' && !hookFailed('gracegate-hc') ? 0 : null,
          atMs: (hc.preStopEndMs ?? NaN) - t0,
          text: `kubelet: preStop ${hc.preStopOutcome ?? 'not seen'}`,
        }
      : null,
    containers: l.containers.map((c) => ({
      name: c.name === 'gracegate-hc' ? 'hc' : c.name,
      preStopEndMs: rel(c.preStopEndMs),
      sigtermMs: (c.sigtermMs ?? NaN) - t0,
      sigkillMs: rel(c.sigkillMs),
      exitMs: (c.exitMs ?? NaN) - t0,
    })),
    lbDownMs: mine.find((e) => e.state === 'DOWN')?.atMs ?? null,
    lbNolbMs: mine.find((e) => e.state === 'NOLB')?.atMs ?? null,
    lbUpAgainMs: upAgain(mine),
    lastServedEndMs: served.length === 0 ? null : Math.max(...served.map((x) => x.endMs)),
    relaySlackMs: relaySlackMs(log, server),
    lastRequestStartMs: Math.max(...records.map((r) => r.startMs - t0)),
  };
}

function scenarioRun(
  g: Installed,
  plan: Plan,
  action: ClusterAction,
  termination: Termination,
  t0: number,
  leaving: Leaving[],
  records: RequestRecord[],
  samples: ReadonlyArray<{ atMs: number }>,
  lbEventsAbs: Array<{ atMs: number; server: string; state: 'DOWN' | 'UP' | 'NOLB'; sessionsActive: number; line: string }>,
  lbLogAbs: RequestLogLine[],
  lbCounters: ScenarioResult['lbCounters'],
  lbVersion: string,
): ScenarioRun {
  const downs: LbEvent[] = lbEventsAbs.map((e) => ({
    atMs: e.atMs - t0,
    server: e.server,
    state: e.state,
    sessionsActive: e.sessionsActive,
    reason: /reason: (.*?), check duration: \d+ms/.exec(e.line)?.[1] ?? e.line,
  }));
  const lbLog = lbLogAbs.map((x) => ({ ...x, startMs: x.startMs - t0, endMs: x.endMs - t0 }));
  const proofs = termination === 'gracegate' ? leaving.map((l) => proofOf(l, plan, t0, downs, lbLog, records)) : [];
  const failures = failuresByKind(records);
  const terminations: ScenarioRun['terminations'] = leaving.map((l) => {
    const startMs = Math.min(...l.containers.map((c) => c.preStopStartMs ?? t0));
    const endMs = Math.max(...l.containers.map((c) => c.exitMs ?? t0));
    const log: TerminationLog = {
      kind: termination,
      label: `${ACTION_LABEL[action]}`,
      pod: l.pod.name,
      startMs,
      endMs,
      marks: [],
      detail: l.containers.map(
        (c) =>
          `${c.name}: preStop ${c.preStopOutcome ?? '-'} ${c.preStopStartMs === null ? '' : c.preStopStartMs - t0}..${c.preStopEndMs === null ? '-' : c.preStopEndMs - t0} ms, SIGTERM ${c.sigtermMs === null ? '-' : c.sigtermMs - t0} ms, SIGKILL ${c.sigkillMs === null ? '-' : c.sigkillMs - t0}, exit ${c.exitMs === null ? '-' : c.exitMs - t0} ms`,
      ),
    };
    return { ...log, server: serverOf(l.pod.node) };
  });
  const result: ScenarioResult = {
    scenario: `cluster ${action}`,
    title: ACTION_LABEL[action],
    sequence: termination === 'gracegate' ? `gracegate ${plan.sequence}` : SEQUENCE_LABEL[termination],
    termination,
    lbSetting: g.options.setting.label,
    requests: records.length,
    failures,
    failureTotal: Object.values(failures).reduce((a, b) => a + b, 0),
    lbCounters,
    chunks: null,
    plannerFindings: plan.findings.map((f) => ({ id: f.id, ...(f.expectedLoss ? { expectedLoss: String(f.expectedLoss) } : {}) })),
    events: [],
    clientInFlight: [],
    podInFlight: [],
    terminationMs: Math.max(0, ...terminations.map((t) => t.endMs - t0)),
    loadStartMs: Math.min(...records.map((r) => r.startMs)) - t0,
    loadEndMs: Math.max(...records.map((r) => r.endMs)) - t0,
    proofs,
    proxy: 'istio-proxy (pilot-agent 1.31-dev, Envoy 1.36.4)',
    lb: lbVersion,
  };
  return {
    result,
    plan,
    records,
    terminations: terminations.map((t) => ({ ...t, startMs: t0 })),
    lbConfig: '',
    downs,
    lbLog,
    longLived: null,
    machineStops: machineStops(samples.map((x) => x.atMs)),
  };
}

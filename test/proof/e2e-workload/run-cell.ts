/**
 * One cell of the experiment on this machine: two pods of the cell's Deployment behind the
 * kube-proxy stand-in (a real HAProxy), ten workers, and after a warm-up a rolling restart with
 * maxSurge 1 / maxUnavailable 0: a new pod, its readiness, then the old pod's deletion (preStop,
 * SIGTERM, SIGKILL at the grace period) while its endpoint leaves the rules 2-4 s later. The run
 * ends when every old pod has exited; requests still running then are on new pods and are not
 * counted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from '../harness/proc';
import { keyedRandom } from '../../../src/core/keyed-random';
import { SERIES, type Cell } from './cells';
import { KubeProxy } from './kube-proxy';
import { WorkloadPod, type PodRecord } from '../harness/workload-kubelet';
import { Load, type Outcome } from './load';

/** The experiment's numbers, in the cluster's seconds. */
export const EXPERIMENT = {
  workers: 10,
  /** The load runs this long before `kubectl rollout restart` (the script's `sleep 8`). */
  warmupSeconds: 8,
  /** Endpoints leave (and join) kube-proxy's rules this long after the change, drawn uniformly. */
  propagation: { minSeconds: 2, maxSeconds: 4 },
} as const;

/** A small seeded generator (mulberry32), so a run's request lengths and delays can be replayed: verify's. */
export const rng = keyedRandom;

export type PodResult = {
  name: string;
  role: 'old' | 'new';
  /** From the container's start to its first passing readiness probe. */
  readySeconds: number | null;
  /** Deletion to SIGTERM: the preStop (or nothing). */
  preStopSeconds: number | null;
  /** SIGTERM to the app's exit: its drain. */
  drainSeconds: number | null;
  /** Deletion to exit. */
  terminationSeconds: number | null;
  killed: boolean;
  preStopFailed: boolean;
};

export type CellResult = {
  id: string;
  series: Cell['series'];
  label: string;
  policy: Cell['policy'];
  scale: number;
  seed: number;
  preStop: string;
  graceful: boolean;
  shutdownTimeoutSeconds: number | null;
  terminationGracePeriodSeconds: number;
  requests: number;
  counts: Record<Outcome, number>;
  failures: number;
  /** Requests still running on new pods when the last old pod had exited (not counted). */
  abandoned: number;
  /** The rollout's start to the last old pod's exit. */
  rolloutSeconds: number;
  pods: PodResult[];
  /** Each endpoint removal: its drawn delay, and whether it reached the rules before the pod's SIGTERM. */
  removals: Array<{ pod: string; delaySeconds: number; beforeSigterm: boolean; lateMs: number }>;
  /**
   * During the rollout, how long the rules held a pod that had stopped listening (SIGTERM closes
   * the listener, graceful or not): the window in which a new connection can be refused. And how
   * long every pod in the rules had stopped listening: every new connection refused.
   */
  closedInRulesSeconds: number;
  noneListeningSeconds: number;
};

/** An endpoint's time in the rules and its pod's listening time, in epoch ms (Infinity: still). */
type Span = { inRules: [number, number]; closedFrom: number };

/** The two windows of CellResult, by a sweep over every instant something changed. */
export function refusalWindows(spans: readonly Span[], from: number, to: number): { closedInRules: number; noneListening: number } {
  const points = [...new Set([from, to, ...spans.flatMap((s) => [...s.inRules, s.closedFrom])])].filter((t) => t >= from && t <= to).sort((a, b) => a - b);
  let closedInRules = 0;
  let noneListening = 0;
  for (let i = 0; i + 1 < points.length; i++) {
    const mid = (points[i]! + points[i + 1]!) / 2;
    const inRules = spans.filter((s) => s.inRules[0] <= mid && mid < s.inRules[1]);
    const closed = inRules.filter((s) => s.closedFrom <= mid);
    const width = points[i + 1]! - points[i]!;
    if (closed.length > 0) closedInRules += width;
    if (inRules.length > 0 && closed.length === inRules.length) noneListening += width;
  }
  return { closedInRules, noneListening };
}

type Obj = Record<string, any>;

/** The cell's preStop, as people read it. */
export function preStopText(deployment: Obj): string {
  const hook = deployment.spec.template.spec.containers[0].lifecycle?.preStop;
  if (hook?.sleep) return `sleep ${hook.sleep.seconds} (native)`;
  if (hook?.exec) return `exec ${hook.exec.command.join(' ')}`;
  return 'none';
}

function env(deployment: Obj, name: string): string | undefined {
  return (deployment.spec.template.spec.containers[0].env ?? []).find((e: { name: string }) => e.name === name)?.value;
}

export async function runCell(cell: Cell, options: { scale: number; seed: number }): Promise<CellResult> {
  const { scale, seed } = options;
  const random = rng(seed);
  const s = (seconds: number) => seconds * 1000 * scale;
  const inCluster = (ms: number | null) => (ms === null ? null : Math.round(ms / scale / 100) / 10);
  const dir = mkdtempSync(join(tmpdir(), `gracegate-workload-${cell.id}-`));
  const podOptions = { scale, secondsEnv: ['SHUTDOWN_TIMEOUT_SEC'], distroless: cell.distroless };
  const delayMs = () => s(EXPERIMENT.propagation.minSeconds + random() * (EXPERIMENT.propagation.maxSeconds - EXPERIMENT.propagation.minSeconds));
  const series = SERIES[cell.series];
  const proxy = await KubeProxy.start(dir);
  const pods: Array<{ pod: WorkloadPod; role: 'old' | 'new' }> = [];
  const start = async (name: string, role: 'old' | 'new') => {
    const pod = await WorkloadPod.start(name, cell.deployment, podOptions);
    pods.push({ pod, role });
    return pod;
  };
  try {
    const replicas = Number((cell.deployment.spec as Obj).replicas);
    const old: WorkloadPod[] = [];
    for (let i = 1; i <= replicas; i++) old.push(await start(`demo-old-${i}`, 'old'));
    for (const pod of old) {
      await pod.ready;
      await proxy.addNow(pod.name, pod.port);
    }
    const load = new Load({
      port: proxy.port,
      workers: EXPERIMENT.workers,
      nextMs: () => s((series.minMs + random() * (series.maxMs - series.minMs)) / 1000),
      timeoutMs: s(series.timeoutMs / 1000),
    });
    await sleep(s(EXPERIMENT.warmupSeconds));

    const rolloutStart = Date.now();
    const terminations: Promise<void>[] = [];
    for (let i = 0; i < old.length; i++) {
      const fresh = await start(`demo-new-${i + 1}`, 'new');
      await fresh.ready;
      void proxy.change(fresh.name, 'add', delayMs(), fresh.port);
      const leaving = old[i]!;
      void proxy.change(leaving.name, 'remove', delayMs());
      const gone = leaving.terminate();
      terminations.push(gone);
      // Kubernetes' default: the next surge pod starts while this one terminates; serialised: after.
      if (cell.policy === 'serialised') await gone;
    }
    await Promise.all(terminations);
    const rolloutEnd = Date.now();
    await proxy.settled();
    // The last failures reach the clients a moment after the pod's exit.
    await sleep(300);
    const abandoned = load.abandon();
    const counts = load.counts();

    const removals = proxy.changes
      .filter((c) => c.change === 'remove')
      .map((c) => {
        const sigterm = pods.find((p) => p.pod.name === c.pod)!.pod.record.sigtermAtMs;
        return { pod: c.pod, delaySeconds: inCluster(c.delayMs)!, beforeSigterm: sigterm !== null && c.appliedAtMs <= sigterm, lateMs: c.lateMs };
      });
    const spans: Span[] = pods.map(({ pod }) => {
      const added = proxy.changes.find((c) => c.pod === pod.name && c.change === 'add')?.appliedAtMs ?? Infinity;
      const removed = proxy.changes.find((c) => c.pod === pod.name && c.change === 'remove')?.appliedAtMs ?? Infinity;
      return { inRules: [added, removed], closedFrom: pod.record.sigtermAtMs ?? Infinity };
    });
    const windows = refusalWindows(spans, rolloutStart, rolloutEnd);
    const d = cell.deployment as Obj;
    const timeout = env(d, 'SHUTDOWN_TIMEOUT_SEC');
    const graceful = env(d, 'GRACEFUL') === 'true';
    return {
      id: cell.id,
      series: cell.series,
      label: cell.label,
      policy: cell.policy,
      scale,
      seed,
      preStop: preStopText(d) + (cell.distroless ? ' (no sleep in the image)' : ''),
      graceful,
      shutdownTimeoutSeconds: graceful && timeout !== undefined ? Number(timeout) : null,
      terminationGracePeriodSeconds: Number(d.spec.template.spec.terminationGracePeriodSeconds),
      requests: load.records.length,
      counts,
      failures: load.records.length - counts.ok,
      abandoned,
      rolloutSeconds: inCluster(rolloutEnd - rolloutStart)!,
      pods: pods.map(({ pod, role }) => {
        const r: PodRecord = pod.record;
        const span = (a: number | null, b: number | null) => (a === null || b === null ? null : inCluster(b - a));
        return {
          name: r.name,
          role,
          readySeconds: span(r.startedAtMs, r.readyAtMs),
          preStopSeconds: span(r.deletedAtMs, r.sigtermAtMs),
          drainSeconds: span(r.sigtermAtMs, r.exitedAtMs),
          terminationSeconds: span(r.deletedAtMs, r.exitedAtMs),
          killed: r.killed,
          preStopFailed: r.preStopFailed,
        };
      }),
      removals,
      closedInRulesSeconds: inCluster(windows.closedInRules)!,
      noneListeningSeconds: inCluster(windows.noneListening)!,
    };
  } finally {
    await Promise.all(pods.map(({ pod }) => pod.stop()));
    await proxy.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * How a pod leaves. `gracegate`: the kubelet deletes the plan's pod (harness/kubelet.ts): both
 * preStop hooks start at once (the hc container's `gracegate drain`, the istio-proxy container's
 * GET /wait-closed), each container gets SIGTERM when its own hook returns, and SIGKILL at the
 * plan's grace period. The two baselines are harness scripts acting directly on the proxy's admin
 * API and the sidecar's manual endpoints, labelled as such in every report.
 */
import type { Plan } from '../../../src/plan/plan-gateway';
import type { PersistedState } from '../../../src/hc/types';
import { PATHS, TERMINATION_EVENTS } from '../../../src/contract/hc';
import { httpCall } from './http';
import { deletePod, type HookOutcome, type PodDeletion } from './kubelet';
import type { Pod } from './pod';
import { sleep } from './proc';
import type { Termination } from './result';

export type Mark = { id: 1 | 2 | 3 | 4; atMs: number; source: string; note?: string };

/** What the two preStop hooks of a gracegate termination ended with (epoch ms). */
export type HookResults = {
  waitClosed: { status: number | null; atMs: number; text: string };
  drain: { code: number | null; atMs: number; text: string };
};

export type TerminationLog = {
  kind: Termination;
  label: string;
  /** The leaving pod. */
  pod: string;
  startMs: number;
  /** When the preStop hooks (or the baseline script's steps) ended. */
  endMs: number;
  marks: Mark[];
  /** gracegate: the hooks, the sidecar's final state file, and the kubelet's record of each container. */
  hooks?: HookResults;
  /**
   * gracegate: what the pod's LB endpoint answered, sampled every LB_SAMPLE_MS from the deletion
   * until every container exited: an HTTP status, or `refused` when nothing listened.
   */
  lbAnswers?: LbAnswer[];
  sidecar?: PersistedState;
  deletion?: PodDeletion;
  detail: string[];
};

export type LbAnswer = { atMs: number; answer: string };
/** How often the harness asks the leaving pod's LB endpoint what it answers (one request at a time). */
export const LB_SAMPLE_MS = 50;

/** Samples `${pod.healthUrl}/health_check.html` until `done` resolves; one request at a time. */
function sampleLbAnswers(pod: Pod, done: Promise<unknown>): { answers: LbAnswer[]; finished: Promise<void> } {
  const answers: LbAnswer[] = [];
  let over = false;
  void done.then(() => {
    over = true;
  });
  const finished = (async () => {
    while (!over) {
      const atMs = Date.now();
      try {
        answers.push({ atMs, answer: String((await httpCall('GET', `${pod.healthUrl}/health_check.html`, 500)).status) });
      } catch (err) {
        answers.push({ atMs, answer: (err as NodeJS.ErrnoException).code === 'ECONNREFUSED' ? 'refused' : 'no answer' });
      }
      await sleep(LB_SAMPLE_MS);
    }
  })();
  return { answers, finished };
}

async function post(url: string): Promise<void> {
  const r = await httpCall('POST', url, 2000);
  if (r.status !== 200) throw new Error(`POST ${url}: HTTP ${r.status} ${r.body}`);
}

/** The sidecar's own record of events [1]-[4] (the LB-side [5], [6] come from HAProxy). */
function marksFromState(state: PersistedState): Mark[] {
  return TERMINATION_EVENTS.flatMap(({ id, key }) => {
    const e = state.events[key];
    return e !== null && !e.estimated && id <= 4 ? [{ id: id as Mark['id'], atMs: e.at, source: 'sidecar state', ...(e.note ? { note: e.note } : {}) }] : [];
  });
}

/** istio-proxy's preStop: `httpGet /wait-closed` on the sidecar's witness port. */
function waitClosedHook(pod: Pod, result: Partial<HookResults>): (abort: AbortSignal) => Promise<HookOutcome> {
  return async (abort) => {
    try {
      const r = await httpCall('GET', `${pod.witnessUrl}/wait-closed`, 3_600_000, abort);
      result.waitClosed = { status: r.status, atMs: Date.now(), text: `HTTP ${r.status} ${r.body.trim()}` };
      return { ok: r.status >= 200 && r.status < 300, text: `GET /wait-closed: HTTP ${r.status}` };
    } catch (err) {
      const text = abort.aborted ? 'abandoned at the grace period' : (err as Error).message;
      result.waitClosed = { status: null, atMs: Date.now(), text };
      return { ok: false, text: `GET /wait-closed: ${text}` };
    }
  };
}

/**
 * The hc container's preStop, as the pod changes write it: `httpGet /hc-stopping` on the witness
 * port (the kubelet starts no process in the hc container). Its answer is the hook's outcome:
 * 200 when the sequence finished (or nothing was witnessed: a restart).
 */
function drainHook(pod: Pod, result: Partial<HookResults>, detail: string[]): (abort: AbortSignal) => Promise<HookOutcome> {
  return async (abort) => {
    try {
      const r = await httpCall('GET', `${pod.witnessUrl}${PATHS.hcStopping}`, 3_600_000, abort);
      detail.push(`hc preStop: GET ${PATHS.hcStopping} answered HTTP ${r.status} ${r.body.trim()}`);
      result.drain = { code: r.status === 200 ? 0 : 1, atMs: Date.now(), text: `HTTP ${r.status} ${r.body.trim()}` };
      return { ok: r.status === 200, text: `GET ${PATHS.hcStopping}: HTTP ${r.status}` };
    } catch (err) {
      const text = abort.aborted ? 'abandoned at the grace period' : (err as Error).message;
      result.drain = { code: null, atMs: Date.now(), text };
      return { ok: false, text: `GET ${PATHS.hcStopping}: ${text}` };
    }
  };
}

export async function gracegateTermination(pod: Pod, plan: Plan): Promise<TerminationLog> {
  const detail: string[] = [];
  const hooks: Partial<HookResults> = {};
  const deleting = deletePod(
    [
      { container: pod.istioProxy, preStop: waitClosedHook(pod, hooks) },
      // A native sidecar (plan.hcSidecar, from spec.kubernetesVersion) waits for istio-proxy's exit for its SIGTERM.
      { container: pod.hcContainer, preStop: drainHook(pod, hooks, detail), nativeSidecar: plan.hcSidecar.kind === 'native' },
    ],
    plan.timings.terminationGracePeriodSeconds * 1000,
  );
  const sampling = sampleLbAnswers(pod, deleting);
  const deletion = await deleting;
  await sampling.finished;
  if (plan.hcSidecar.kind === 'native') detail.push(`${HC_NATIVE_NOTE}`);
  for (const c of deletion.containers) {
    const at = (ms: number | null): string => (ms === null ? '-' : `${ms - deletion.startMs} ms`);
    detail.push(
      `${c.name}: preStop ${c.preStop ? `${c.preStop.outcome.text} at ${at(c.preStop.endMs)}` : '-'}, SIGTERM at ${at(c.sigtermMs)}, SIGKILL ${at(c.sigkillMs)}, exited at ${at(c.exitMs)}`,
    );
  }
  if (pod.istioProxy.drainAnswer !== null) detail.push(`istio-proxy: pilot-agent's drain call answered ${pod.istioProxy.drainAnswer}`);
  const sidecar = pod.persistedState() ?? undefined;
  if (!sidecar) detail.push('the sidecar left no state file');
  return {
    kind: 'gracegate',
    label: `gracegate ${plan.sequence}`,
    pod: pod.name,
    startMs: deletion.startMs,
    endMs: Math.max(...deletion.containers.map((c) => c.exitMs)),
    marks: sidecar ? marksFromState(sidecar) : [],
    ...(hooks.waitClosed && hooks.drain ? { hooks: hooks as HookResults } : {}),
    lbAnswers: sampling.answers,
    ...(sidecar ? { sidecar } : {}),
    deletion,
    detail,
  };
}

const HC_NATIVE_NOTE = 'hc: a native sidecar (init container, restartPolicy Always): its SIGTERM waited for istio-proxy to exit';

/**
 * Naive: no preStop. The LB endpoint fails at once (the seed's "503 at once"), and the containers
 * get SIGTERM: pilot-agent starts Envoy's graceful drain (`listeners: 'stopped'`: followed by a
 * plain drain_listeners, so new connects are refused at once while the LB still sends), and Envoy
 * is gone terminationDrainDuration later (harness/containers.ts plays pilot-agent).
 */
export async function naiveTermination(pod: Pod, listeners: 'graceful' | 'stopped' = 'graceful'): Promise<TerminationLog> {
  const startMs = Date.now();
  const marks: Mark[] = [];
  await post(`${pod.controlUrl}/close-lb`);
  marks.push({ id: 1, atMs: Date.now(), source: 'harness: POST /close-lb' });
  pod.istioProxy.sigterm();
  if (listeners === 'stopped') await post(`${pod.adminUrl}/drain_listeners`);
  const call = listeners === 'graceful' ? 'pilot-agent drain_listeners?graceful' : 'pilot-agent drain_listeners?graceful + drain_listeners';
  marks.push({ id: 3, atMs: Date.now(), source: `harness: ${call}` });
  await stopContainers(pod);
  return {
    kind: listeners === 'graceful' ? 'naive' : 'naive-listeners-stopped',
    label: `naive (503 at once, ${call}, proxy exits after terminationDrainDuration)`,
    pod: pod.name,
    startMs,
    endMs: Date.now(),
    marks,
    detail: [],
  };
}

/** SIGTERM both containers (pilot-agent kills Envoy terminationDrainDuration later) and wait until both have exited. */
async function stopContainers(pod: Pod): Promise<void> {
  pod.istioProxy.sigterm();
  pod.hcContainer.sigterm();
  await Promise.all([pod.istioProxy.exited, pod.hcContainer.exited]);
}

/**
 * The seed's literal order: drain while still accepting (`drain_listeners?graceful&skip_exit`),
 * poll in-flight up to the drain timeout, then 503, wait the LB buffer, then SIGTERM the containers.
 */
export async function seedTermination(pod: Pod, plan: Plan): Promise<TerminationLog> {
  const startMs = Date.now();
  const marks: Mark[] = [];
  const detail: string[] = [];
  await post(`${pod.adminUrl}/drain_listeners?graceful&skip_exit`);
  marks.push({ id: 3, atMs: Date.now(), source: 'harness: drain_listeners?graceful&skip_exit' });
  const deadline = Date.now() + plan.timings.drainTimeoutSeconds * 1000;
  let last = -1;
  while (Date.now() < deadline) {
    last = await pod.activeRequests();
    if (last === 0) {
      marks.push({ id: 4, atMs: Date.now(), source: 'harness poll of the proxy' });
      break;
    }
    await sleep(plan.timings.pollIntervalSeconds * 1000);
  }
  if (last !== 0) detail.push(`in-flight never reached 0 (still ${last} after ${plan.timings.drainTimeoutSeconds}s)`);
  await post(`${pod.controlUrl}/close-lb`);
  marks.push({ id: 1, atMs: Date.now(), source: 'harness: POST /close-lb' });
  await sleep(plan.timings.lbBufferSeconds * 1000);
  await stopContainers(pod);
  return { kind: 'seed', label: 'article order (keep accepting, poll, then 503)', pod: pod.name, startMs, endMs: Date.now(), marks, detail };
}

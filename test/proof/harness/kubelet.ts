/**
 * Pod deletion the way the kubelet does it (kubernetes pkg/kubelet/kuberuntime
 * `killContainersWithSyncResult` / `killContainer`): every container is stopped in parallel; a
 * container with a preStop hook gets SIGTERM as soon as its *own* hook returns (not when every
 * hook has), and SIGKILL when what is left of the grace period after its hook has passed, at
 * least 2 s (`minimumGracePeriodInSeconds`). A hook still running at the grace period is abandoned
 * and its container stopped. What is left is counted in whole seconds, as the kubelet counts it
 * (`gracePeriod - int64(hook duration in seconds)`): a 2.6 s hook takes 2 s off the grace period,
 * so SIGKILL comes up to a second after the grace period's end (held to the real kubelet by
 * test/proof/cluster/kubelet-model.test.ts, which found it).
 *
 * Native sidecars (KEP-753: init containers with restartPolicy Always) follow the termination
 * order of `kuberuntime_termination_order.go`: their preStop starts with everyone else's, but
 * their SIGTERM waits until every main container has exited and every native sidecar declared
 * after them has (reverse order), or the grace period has run out (`waitForTurn`); they then get
 * what is left of it, at least the same 2 s. Not modelled: the kubelet restarting a native
 * sidecar that dies while the pod terminates.
 */
import type { Container } from './containers';

/** kubelet's `minimumGracePeriodInSeconds`: a container always gets this long between SIGTERM and SIGKILL. */
export const MINIMUM_STOP_GRACE_MS = 2000;

export type HookOutcome = { ok: boolean; text: string };

export type KubeletContainer = {
  container: Container;
  /** The preStop hook; it must settle when `abort` fires (the kubelet stops waiting at the grace period). */
  preStop?: (abort: AbortSignal) => Promise<HookOutcome>;
  /** A native sidecar (an init container with restartPolicy Always), in declaration order among the others. */
  nativeSidecar?: boolean;
};

/** What happened to one container, in epoch ms. */
export type ContainerStop = {
  name: string;
  preStop?: { endMs: number; outcome: HookOutcome; abandoned: boolean };
  sigtermMs: number;
  sigkillMs: number | null;
  exitMs: number;
  /** Native sidecars: how long SIGTERM waited for its turn after the preStop returned. */
  waitedForTurnMs?: number;
};

export type PodDeletion = { startMs: number; graceMs: number; containers: ContainerStop[] };

/** The kubelet's arithmetic: seconds, an elapsed wait truncated to whole seconds before it is subtracted. */
export const wholeSecondsMs = (ms: number): number => Math.floor(ms / 1000) * 1000;

async function stopOne(c: KubeletContainer, startMs: number, graceMs: number, minimumStopGraceMs: number, turn: Promise<unknown>): Promise<ContainerStop> {
  const deadline = startMs + graceMs;
  // What is left of the grace period for SIGTERM to SIGKILL, as the kubelet subtracts the waits.
  let remainingMs = graceMs;
  let preStop: ContainerStop['preStop'];
  if (c.preStop) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), Math.max(0, deadline - Date.now()));
    const outcome = await c.preStop(abort.signal);
    clearTimeout(timer);
    preStop = { endMs: Date.now(), outcome, abandoned: abort.signal.aborted };
    remainingMs -= wholeSecondsMs(preStop.endMs - startMs);
  }
  let waitedForTurnMs: number | undefined;
  if (c.nativeSidecar) {
    const from = Date.now();
    let timer: NodeJS.Timeout | undefined;
    // The kubelet waits for the turn at most what is left of its own count (waitForTurn), not to the grace period's end.
    await Promise.race([
      turn,
      new Promise((r) => {
        timer = setTimeout(r, Math.max(0, remainingMs));
      }),
    ]);
    clearTimeout(timer);
    waitedForTurnMs = Date.now() - from;
    if (remainingMs > 0) remainingMs -= wholeSecondsMs(waitedForTurnMs);
  }
  const sigtermMs = Date.now();
  c.container.sigterm();
  let sigkillMs: number | null = null;
  const killAt = sigtermMs + Math.max(remainingMs, minimumStopGraceMs);
  const timer = setTimeout(() => {
    sigkillMs = Date.now();
    c.container.sigkill();
  }, killAt - sigtermMs);
  await c.container.exited;
  clearTimeout(timer);
  return {
    name: c.container.name,
    ...(preStop ? { preStop } : {}),
    sigtermMs,
    sigkillMs,
    exitMs: c.container.exitedAtMs ?? Date.now(),
    ...(waitedForTurnMs !== undefined ? { waitedForTurnMs } : {}),
  };
}

/** Deletes a pod: resolves when every container has exited. */
export async function deletePod(containers: KubeletContainer[], graceMs: number, minimumStopGraceMs = MINIMUM_STOP_GRACE_MS): Promise<PodDeletion> {
  const startMs = Date.now();
  // A native sidecar's turn: every main container exited, and every native sidecar declared after it.
  const mains = containers.filter((c) => !c.nativeSidecar).map((c) => c.container.exited);
  const sidecars = containers.filter((c) => c.nativeSidecar);
  const turnOf = (c: KubeletContainer): Promise<unknown> => Promise.all([...mains, ...sidecars.slice(sidecars.indexOf(c) + 1).map((s) => s.container.exited)]);
  const stops = await Promise.all(containers.map((c) => stopOne(c, startMs, graceMs, minimumStopGraceMs, c.nativeSidecar ? turnOf(c) : Promise.resolve())));
  return { startMs, graceMs, containers: stops };
}

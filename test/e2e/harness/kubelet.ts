/**
 * Pod deletion the way the kubelet does it (kubernetes pkg/kubelet/kuberuntime
 * `killContainersWithSyncResult` / `killContainer`): every container is stopped in parallel; a
 * container with a preStop hook gets SIGTERM as soon as its *own* hook returns (not when every
 * hook has), and SIGKILL when what is left of the grace period after its hook has passed, at
 * least 2 s (`minimumGracePeriodInSeconds`). A hook still running at the grace period is abandoned
 * and its container stopped. Regular containers only: native sidecars (KEP-753) are stopped after
 * the main containers, and the spec has no option for them yet.
 */
import type { Container } from './containers';

/** kubelet's `minimumGracePeriodInSeconds`: a container always gets this long between SIGTERM and SIGKILL. */
export const MINIMUM_STOP_GRACE_MS = 2000;

export type HookOutcome = { ok: boolean; text: string };

export type KubeletContainer = {
  container: Container;
  /** The preStop hook; it must settle when `abort` fires (the kubelet stops waiting at the grace period). */
  preStop?: (abort: AbortSignal) => Promise<HookOutcome>;
};

/** What happened to one container, in epoch ms. */
export type ContainerStop = {
  name: string;
  preStop?: { endMs: number; outcome: HookOutcome; abandoned: boolean };
  sigtermMs: number;
  sigkillMs: number | null;
  exitMs: number;
};

export type PodDeletion = { startMs: number; graceMs: number; containers: ContainerStop[] };

async function stopOne(c: KubeletContainer, startMs: number, graceMs: number, minimumStopGraceMs: number): Promise<ContainerStop> {
  const deadline = startMs + graceMs;
  let preStop: ContainerStop['preStop'];
  if (c.preStop) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), Math.max(0, deadline - Date.now()));
    const outcome = await c.preStop(abort.signal);
    clearTimeout(timer);
    preStop = { endMs: Date.now(), outcome, abandoned: abort.signal.aborted };
  }
  const sigtermMs = Date.now();
  c.container.sigterm();
  let sigkillMs: number | null = null;
  const killAt = Math.max(deadline, sigtermMs + minimumStopGraceMs);
  const timer = setTimeout(() => {
    sigkillMs = Date.now();
    c.container.sigkill();
  }, killAt - sigtermMs);
  await c.container.exited;
  clearTimeout(timer);
  return { name: c.container.name, ...(preStop ? { preStop } : {}), sigtermMs, sigkillMs, exitMs: c.container.exitedAtMs ?? Date.now() };
}

/** Deletes a pod: resolves when every container has exited. */
export async function deletePod(containers: KubeletContainer[], graceMs: number, minimumStopGraceMs = MINIMUM_STOP_GRACE_MS): Promise<PodDeletion> {
  const startMs = Date.now();
  const stops = await Promise.all(containers.map((c) => stopOne(c, startMs, graceMs, minimumStopGraceMs)));
  return { startMs, graceMs, containers: stops };
}

/**
 * The harness's kubelet (test/proof/harness/kubelet.ts) and the real one, on the same pod. The same pod is deleted
 * on both: two containers that ignore SIGTERM, preStop hooks of 2.6 s and 0.9 s, a grace period of
 * 6 s; once with both as ordinary containers, once with the short one a native sidecar. The
 * tolerances were fixed before the first cluster run: hooks start together (within 100 ms), each
 * container's SIGTERM comes with its own hook's end (within 100 ms of the model), SIGKILL and the
 * native sidecar's turn within 250 ms of the model. The native sidecar's turn is counted from the
 * main container's exit as the kubelet saw it, and its SIGKILL from its turn.
 */
import assert from 'node:assert/strict';
import { deletePod, type KubeletContainer } from '../harness/kubelet';
import type { Container } from '../harness/containers';
import { IMAGES } from './layout';
import { kubectl, kubectlApply } from './kubectl';
import { sleep, waitUntil } from './sh';
import { containerRecords, podContainers, type ContainerRecord } from './witnesses';

export const KUBELET_MODEL_NS = 'kubelet-model';
const NS = KUBELET_MODEL_NS;
export const GRACE_S = 6;
const HOOKS = { long: 2600, short: 900 } as const;

/** A container of the model that ignores SIGTERM, as the test app does with IGNORE_SIGTERM=1. */
class StubbornContainer implements Container {
  exitedAtMs: number | null = null;
  sigtermAtMs: number | null = null;
  private exit!: () => void;
  readonly exited = new Promise<void>((r) => {
    this.exit = r;
  });
  constructor(readonly name: string) {}
  sigterm(): void {
    this.sigtermAtMs ??= Date.now();
  }
  sigkill(): void {
    if (this.exitedAtMs !== null) return;
    this.exitedAtMs = Date.now();
    this.exit();
  }
}

function podManifest(name: string, native: boolean): string {
  const container = (c: 'long' | 'short', port: number) => ({
    name: c,
    image: IMAGES.testapp,
    imagePullPolicy: 'IfNotPresent',
    env: [
      { name: 'IGNORE_SIGTERM', value: '1' },
      { name: 'LISTEN', value: `:${port}` },
    ],
    lifecycle: { preStop: { httpGet: { path: `/slow?ms=${HOOKS[c]}`, port } } },
    securityContext: { runAsNonRoot: true, runAsUser: 65534, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
  });
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      terminationGracePeriodSeconds: GRACE_S,
      containers: [container('long', 8081), ...(native ? [] : [container('short', 8082)])],
      ...(native ? { initContainers: [{ ...container('short', 8082), restartPolicy: 'Always' }] } : {}),
    },
  });
}

/** `stopped`: the exit as the kubelet sees it (its runtime call returned); the model's is its exit. */
export type Times = { hookStart: number; hookEnd: number; sigterm: number; sigkill: number | null; exit: number; stopped: number };

async function onCluster(name: string, native: boolean): Promise<Record<'long' | 'short', Times>> {
  kubectlApply(podManifest(name, native));
  kubectl(['-n', NS, 'wait', '--for=condition=Ready', `pod/${name}`, '--timeout=60s'], { timeoutMs: 70_000 });
  const pc = podContainers(NS, name);
  kubectl(['-n', NS, 'delete', 'pod', name, '--wait=false']);
  await waitUntil(
    `pod ${name} gone`,
    30_000,
    () => (kubectl(['-n', NS, 'get', 'pod', name, '--ignore-not-found', '-o', 'name']).trim() === '' ? true : undefined),
    200,
  );
  await sleep(300);
  const records = containerRecords(pc);
  const of = (c: string): Times => {
    const r = records.find((x) => x.name === c) as ContainerRecord;
    assert.ok(
      r.preStopStartMs && r.preStopEndMs && r.sigtermMs && r.exitMs && r.kubeletExitMs,
      `${c}: the kubelet and containerd logged every step: ${JSON.stringify(r)}`,
    );
    return { hookStart: r.preStopStartMs, hookEnd: r.preStopEndMs, sigterm: r.sigtermMs, sigkill: r.sigkillMs, exit: r.exitMs, stopped: r.kubeletExitMs };
  };
  return { long: of('long'), short: of('short') };
}

async function onModel(native: boolean): Promise<Record<'long' | 'short', Times>> {
  const long = new StubbornContainer('long');
  const short = new StubbornContainer('short');
  const hook = (ms: number) => async (abort: AbortSignal) => {
    await new Promise<void>((r) => {
      const t = setTimeout(r, ms);
      abort.addEventListener(
        'abort',
        () => {
          clearTimeout(t);
          r();
        },
        { once: true },
      );
    });
    return { ok: true, text: 'slept' };
  };
  const containers: KubeletContainer[] = [
    { container: long, preStop: hook(HOOKS.long) },
    { container: short, preStop: hook(HOOKS.short), nativeSidecar: native },
  ];
  const d = await deletePod(containers, GRACE_S * 1000);
  const of = (name: string): Times => {
    const c = d.containers.find((x) => x.name === name)!;
    return { hookStart: d.startMs, hookEnd: c.preStop!.endMs, sigterm: c.sigtermMs, sigkill: c.sigkillMs, exit: c.exitMs, stopped: c.exitMs };
  };
  return { long: of('long'), short: of('short') };
}

/** Every time relative to the earliest hook start (the kubelet's own start of the deletion). */
export function relative(t: Record<'long' | 'short', Times>): Record<'long' | 'short', Record<keyof Times, number | null>> {
  const t0 = Math.min(t.long.hookStart, t.short.hookStart);
  const rel = (x: Times) => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, v === null ? null : v - t0])) as Record<keyof Times, number | null>;
  return { long: rel(t.long), short: rel(t.short) };
}

export type KubeletComparison = { native: boolean; real: ReturnType<typeof relative>; model: ReturnType<typeof relative> };

/** Deletes the pod on the cluster and on the model; times relative to each one's first hook start. */
export async function compareKubelet(native: boolean): Promise<KubeletComparison> {
  const real = relative(await onCluster(native ? 'native' : 'ordinary', native));
  const model = relative(await onModel(native));
  return { native, real, model };
}

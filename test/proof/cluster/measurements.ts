/**
 * The cluster report's measurements beyond the proof sessions (report-main.ts): the hc's CPU and
 * memory under the LB's probes, what the drain does to istio-proxy's readiness listener (15021)
 * and to the two Services' endpoints during a long drain, and how long a pod outlives its proxy
 * where nothing scrapes /metrics (the final-scrape wait).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HC_RESOURCES } from '../../../src/pod/pod-changes';
import { LB_SETTINGS, type LbSetting } from '../harness/scenario';
import { gatewayPods, installGateway, planOf, uninstallGateway, waitSettled } from './gateway';
import { kubectl } from './kubectl';
import { NODES, STATIC_NODE_PORTS } from './layout';
import { ClusterLoad } from './load';
import { sleep, waitUntil } from './sh';
import { startLb, stopLb, terminationUnderLoad } from './termination';
import { CpuWatch, podContainers, podEvents, PodFiles, SliceWatch } from './witnesses';

const ms = (v: number) => Math.round(v);

export type ProbeLoad = {
  /** The hc container's CPU limit the measurement ran under (HC_RESOURCES then; null: none). */
  hcCpuLimit: string | null;
  seconds: number;
  idle: { cpuMsPerSecond: number };
  load: { workers: number; probesPerSecond: number; p99Ms: number; failures: number; cpuMsPerSecond: number; throttledMsPerSecond: number };
  /** The hc container's peak memory (cgroup memory.max_usage_in_bytes) over both phases. */
  maxMemoryMiB: number;
};

function maxMemoryMiB(node: string, podUid: string, containerId: string): number {
  const n = NODES.find((x) => x.name === node)!;
  for (const qos of ['burstable', 'besteffort', '']) {
    try {
      const file = join('/sys/fs/cgroup/memory', n.cgroupRoot, 'kubepods', qos, `pod${podUid}`, containerId, 'memory.max_usage_in_bytes');
      return Math.round(Number(readFileSync(file, 'utf8').trim()) / 1024 / 1024);
    } catch {
      // not this QoS class
    }
  }
  return NaN;
}

/** The hc's CPU idle, then under `workers` keep-alive probers of /health_check.html through the health NodePort. */
export async function probeLoad(index: number, workers = 8, seconds = 20): Promise<ProbeLoad> {
  const g = await installGateway({
    namespace: 'gg-probe-load',
    name: 'igw',
    setting: LB_SETTINGS.noFlush,
    replicas: 2,
    healthNodePort: STATIC_NODE_PORTS.probeLoad + index,
    chart: '1.27.9',
  });
  try {
    const [pod] = await waitSettled(g, 2);
    const hc = podContainers(g.options.namespace, pod!.name).containers.find((c) => c.name === 'gracegate-hc')!;
    const target = { key: pod!.name, node: pod!.node, podUid: pod!.uid, containerId: hc.id };
    const idle = new CpuWatch(() => [target]);
    await sleep(seconds * 1000);
    idle.stop();
    const node = NODES.find((n) => n.name === pod!.node)!;
    const loaded = new CpuWatch(() => [target]);
    const probes = await ClusterLoad.start({
      baseUrl: `http://${node.ip}:${g.options.healthNodePort}`,
      path: '/health_check.html',
      workers,
      mix: [{ weight: 1, spec: { kind: 'slow', ms: 0 } }],
      requestTimeoutMs: 2000,
      durationMs: seconds * 1000,
    });
    const r = await probes.finish(seconds * 1000 + 10_000, false);
    loaded.stop();
    const i = idle.delta(pod!.name)!;
    const l = loaded.delta(pod!.name)!;
    const durations = r.records.map((x) => x.endMs - x.startMs).sort((a, b) => a - b);
    const limits: { cpu?: string; memory: string } = HC_RESOURCES.limits;
    return {
      hcCpuLimit: limits.cpu ?? null,
      seconds,
      idle: { cpuMsPerSecond: ms(i.usageMs / (i.overMs / 1000)) },
      load: {
        workers,
        probesPerSecond: ms(r.records.length / ((r.endMs - r.startMs) / 1000)),
        p99Ms: durations[Math.floor(durations.length * 0.99)] ?? NaN,
        failures: r.records.filter((x) => x.outcome !== 'ok').length,
        cpuMsPerSecond: ms(l.usageMs / (l.overMs / 1000)),
        throttledMsPerSecond: ms(l.throttledMs / (l.overMs / 1000)),
      },
      maxMemoryMiB: maxMemoryMiB(pod!.node, pod!.uid, hc.id),
    };
  } finally {
    await uninstallGateway(g);
  }
}

export type LongDrain = {
  sequence: string;
  lbSetting: string;
  /** ms after the proxy drain [3]: */
  proxyReadinessFailedMs: number | null;
  gatewayNotServingMs: number | null;
  healthNotServingMs: number | null;
  /** The health Service kept the pod ready (publishNotReadyAddresses) until it left. */
  healthReadyUntilGone: boolean;
  drainToExitMs: number | null;
  longRequestOutcome: string;
};

/**
 * A drain held open by one long request (60 s, on the leaving pod's own node), so that istio-proxy's
 * readiness probe (15021, every 15 s, 4 failures) has time to notice the drain closing its listener.
 */
export async function longDrain(setting: LbSetting, index: number): Promise<LongDrain> {
  const g = await installGateway({
    namespace: `gg-long-drain-${index}`,
    name: 'igw',
    setting,
    replicas: 2,
    healthNodePort: STATIC_NODE_PORTS.longDrain + index,
    chart: '1.27.9',
    specPatch: { traffic: { longRequestP99Seconds: 60 } },
  });
  const lb = await startLb(g, 8180 + index);
  try {
    const plan = planOf(g);
    const [pod] = await waitSettled(g, 2);
    const node = NODES.find((n) => n.name === pod!.node)!;
    const files = new PodFiles(() => [{ ...pod!, namespace: g.options.namespace }], ['istio-proxy']);
    const slices = new SliceWatch(g.options.namespace);
    const long = await ClusterLoad.start({
      baseUrl: `http://${node.ip}:${g.trafficNodePort}`,
      workers: 1,
      mix: [{ weight: 1, spec: { kind: 'slow', ms: 60_000 } }],
      requestTimeoutMs: 120_000,
      durationMs: 500,
      maxRequests: 1,
    });
    await sleep(1000);
    kubectl(['-n', g.options.namespace, 'delete', 'pod', pod!.name, '--wait=false']);
    await waitUntil('the long drain to end and the pod to leave', 180_000, () => (gatewayPods(g).some((p) => p.name === pod!.name) ? undefined : true), 1000);
    files.stop();
    slices.stop();
    const r = await long.finish(10_000, false);
    const state = files.state(pod!.name);
    const drain = state?.events.proxyDrainStarts?.at ?? null;
    const rel = (v: number | null | undefined) => (v === null || v === undefined || drain === null ? null : v - drain);
    const svc = (name: string, cond: (e: { ready: boolean | null; serving: boolean | null }) => boolean) =>
      slices.samples.find((s) => s.service === name && s.endpoints.some((e) => e.pod === pod!.name && cond(e)))?.atMs ?? null;
    const failed = podEvents(g.options.namespace, pod!.name).find((e) => e.reason === 'Unhealthy' && e.container === 'istio-proxy');
    const healthSamples = slices.samples.filter((s) => s.service === g.healthService).flatMap((s) => s.endpoints.filter((e) => e.pod === pod!.name));
    const exit = state?.history.find((h) => h.state === 'CLOSED')?.at ?? null;
    return {
      sequence: plan.sequence,
      lbSetting: setting.label,
      proxyReadinessFailedMs: rel(failed?.atMs),
      gatewayNotServingMs: rel(svc(g.options.name, (e) => e.serving === false)),
      healthNotServingMs: rel(g.healthService === null ? null : svc(g.healthService, (e) => e.serving === false)),
      healthReadyUntilGone: healthSamples.every((e) => e.ready === true),
      drainToExitMs: rel(exit),
      longRequestOutcome: r.records[0]?.outcome ?? 'none',
    };
  } finally {
    await stopLb(lb);
    await uninstallGateway(g);
  }
}

export type FinalScrape = {
  /** The plan's finalScrapeWaitSeconds (twice the scrape interval): what each pod waited before. */
  boundSeconds: number;
  /** Each replaced pod: its hc exited this long after istio-proxy. */
  hcExitAfterProxyMs: number[];
  rolloutMs: number;
};

/** A rollout of a gateway planned with Prometheus (synth's default) where nothing scrapes /metrics. */
export async function finalScrape(index: number): Promise<FinalScrape> {
  const g = await installGateway({
    namespace: 'gg-final-scrape',
    name: 'igw',
    setting: LB_SETTINGS.noFlush,
    replicas: 2,
    healthNodePort: STATIC_NODE_PORTS.finalScrape + index,
    chart: '1.27.9',
    specPatch: { observability: { prometheus: 'operator' } },
  });
  const lb = await startLb(g, 8195 + index);
  try {
    const plan = planOf(g);
    const run = await terminationUnderLoad(g, lb, 'rollout');
    return {
      boundSeconds: plan.timings.finalScrapeWaitSeconds,
      hcExitAfterProxyMs: run.leaving.map((l) => {
        const c = (n: string) => l.containers.find((x) => x.name === n)?.exitMs ?? NaN;
        return ms(c('gracegate-hc') - c('istio-proxy'));
      }),
      rolloutMs: run.settledMs,
    };
  } finally {
    await stopLb(lb);
    await uninstallGateway(g);
  }
}

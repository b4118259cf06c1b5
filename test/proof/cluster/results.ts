/**
 * What a cluster run measured, in the shape the results file keeps (docs/cluster/results.json):
 * per run the requests and what was lost, and per leaving pod its termination on the cluster's
 * clocks (ms after the action): the kubelet's hooks and signals, the sidecar's events, HAProxy's
 * DOWN, and the EndpointSlices' view of the pod.
 */
import type { Session } from './sessions';
import type { ClusterRun } from './termination';
import { ISTIO_VERSION, KUBERNETES_VERSION, PROXY_ENVOY_VERSION } from './layout';

export type PodTimeline = {
  pod: string;
  node: string;
  /** The kubelet: both preStop hooks' start, the proxy hold's end, SIGTERM and exit of each container. */
  preStopStartMs: number | null;
  proxyHoldEndMs: number | null;
  proxySigtermMs: number | null;
  proxyExitMs: number | null;
  hcSigtermMs: number | null;
  hcExitMs: number | null;
  sigkills: number;
  /**
   * The kubelet's probe failures of the hc from the action to the hc's SIGTERM that are not the
   * sequence's own answer: a liveness or startup failure, or a readiness probe that got no HTTP
   * answer. Its probes are its own (not rewritten onto pilot-agent), so there are none (issue 30
   * point 1); readiness answering 503 is the sequence's [2].
   */
  hcProbeFailures?: number;
  /** The sidecar: [1] LB health fails, [3] drain starts, [4] in-flight 0, CLOSED; did the drain time out. */
  lbFailMs: number | null;
  drainStartMs: number | null;
  zeroMs: number | null;
  closedMs: number | null;
  drainTimedOut: boolean | null;
  /** HAProxy: the pod's node went NOLB / DOWN. */
  lbNolbMs: number | null;
  lbDownMs: number | null;
  /**
   * EndpointSlices of the gateway Service: the pod's first ready=false (a terminating pod is never
   * ready), first serving=false (its containers' readiness failed: istio-proxy's 15021 closes with
   * the drain), first terminating, and when it left them.
   */
  gatewayNotReadyMs: number | null;
  gatewayNotServingMs: number | null;
  gatewayTerminatingMs: number | null;
  gatewayGoneMs: number | null;
  /** The health Service (publishNotReadyAddresses): the pod's first serving=false, first terminating, and when it left. */
  healthNotServingMs: number | null;
  healthTerminatingMs: number | null;
  healthGoneMs: number | null;
  /** pilot-agent's own lines in istio-proxy's log after SIGTERM (what it told Envoy, when it killed it). */
  pilotAgent: Array<{ atMs: number; text: string }>;
  /** The sidecar's sequence started this long after the kubelet ran the preStop hooks (the hc's `gracegate drain` starting up). */
  sequenceStartLagMs: number | null;
  /** The hc container's CPU over the termination, and the time the CFS quota throttled it. */
  hcCpu: { usageMs: number; throttledMs: number; throttledPeriods: number } | null;
};

export type RunSummary = {
  session: string;
  action: string;
  sequence: string;
  lbSetting: string;
  chart: string;
  hcSidecar: 'native' | 'container';
  requests: number;
  failures: Record<string, number>;
  failureTotal: number;
  /** When the load ended, ms after the action (every pod replaced and back in the LB). */
  settledMs: number;
  pods: PodTimeline[];
  secondEviction?: string;
  versions: { kubernetes: string; istio: string; envoy: string; haproxy: string };
};

const rel = (ms: number | null | undefined, t0: number): number | null => (ms === null || ms === undefined || Number.isNaN(ms) ? null : ms - t0);

/** pilot-agent's lines of interest on SIGTERM (istio/istio pkg/envoy/agent.go). */
const PILOT_AGENT_LINES = /draining|Graceful termination|Aborting|terminat|Envoy exited|exiting/i;

export function summarize(s: Session, r: ClusterRun): RunSummary {
  const t0 = r.run.terminations[0]?.startMs ?? 0;
  const proofs = r.run.result.proofs;
  const pods = r.leaving.map((l): PodTimeline => {
    const c = (name: string) => l.containers.find((x) => x.name === name);
    const proxy = c('istio-proxy');
    const hc = c('gracegate-hc');
    const proof = proofs.find((p) => p.pod === l.pod.name);
    const gatewaySvc = 'igw';
    const healthSvc = 'igw-gracegate-health';
    return {
      pod: l.pod.name,
      node: l.pod.node,
      preStopStartMs: rel(Math.min(...l.containers.map((x) => x.preStopStartMs ?? Infinity)), t0),
      proxyHoldEndMs: rel(proxy?.preStopEndMs, t0),
      proxySigtermMs: rel(proxy?.sigtermMs, t0),
      proxyExitMs: rel(proxy?.exitMs, t0),
      hcSigtermMs: rel(hc?.sigtermMs, t0),
      hcExitMs: rel(hc?.exitMs, t0),
      sigkills: l.containers.filter((x) => x.sigkillMs !== null).length,
      hcProbeFailures: (hc?.probeFailures ?? []).filter(
        (f) => f.atMs >= t0 && (hc?.sigtermMs == null || f.atMs < hc.sigtermMs) && (f.probe !== 'Readiness' || !f.answered),
      ).length,
      lbFailMs: rel(l.state?.events.lbHealthFails?.at, t0),
      drainStartMs: rel(l.state?.events.proxyDrainStarts?.at, t0),
      zeroMs: rel(l.state?.events.inFlightZero?.at, t0),
      closedMs: rel(l.state?.history.find((h) => h.state === 'CLOSED')?.at, t0),
      drainTimedOut: l.state?.drainTimedOut ?? null,
      lbNolbMs: proof?.lbNolbMs ?? null,
      lbDownMs: proof?.lbDownMs ?? r.run.downs.find((d) => d.state === 'DOWN' && d.server === proof?.server)?.atMs ?? null,
      gatewayNotReadyMs: rel(
        firstWhen(r, gatewaySvc, l.pod.name, (e) => e.ready === false, t0),
        t0,
      ),
      gatewayNotServingMs: rel(
        firstWhen(r, gatewaySvc, l.pod.name, (e) => e.serving === false, t0),
        t0,
      ),
      gatewayTerminatingMs: rel(
        firstWhen(r, gatewaySvc, l.pod.name, (e) => e.terminating === true, t0),
        t0,
      ),
      gatewayGoneMs: rel(goneAt(r, gatewaySvc, l.pod.name, t0), t0),
      healthNotServingMs: rel(
        firstWhen(r, healthSvc, l.pod.name, (e) => e.serving === false, t0),
        t0,
      ),
      healthTerminatingMs: rel(
        firstWhen(r, healthSvc, l.pod.name, (e) => e.terminating === true, t0),
        t0,
      ),
      healthGoneMs: rel(goneAt(r, healthSvc, l.pod.name, t0), t0),
      sequenceStartLagMs: l.state?.sequenceStartedAt && hc?.preStopStartMs ? l.state.sequenceStartedAt - hc.preStopStartMs : null,
      hcCpu: l.hcCpu
        ? { usageMs: Math.round(l.hcCpu.usageMs), throttledMs: Math.round(l.hcCpu.throttledMs), throttledPeriods: l.hcCpu.throttledPeriods }
        : null,
      pilotAgent: l.proxyLog
        .filter((x) => x.atMs >= (proxy?.sigtermMs ?? Infinity) - 50 && PILOT_AGENT_LINES.test(x.text))
        .map((x) => ({ atMs: x.atMs - t0, text: x.text.slice(0, 200) })),
    };
  });
  return {
    session: s.key,
    action: r.action,
    sequence: r.run.result.sequence,
    lbSetting: s.setting.label,
    chart: s.chart,
    hcSidecar: s.hcSidecar ?? 'container',
    requests: r.run.result.requests,
    failures: r.run.result.failures,
    failureTotal: r.run.result.failureTotal,
    settledMs: r.settledMs,
    pods,
    ...(r.secondEviction !== undefined ? { secondEviction: r.secondEviction } : {}),
    versions: { kubernetes: KUBERNETES_VERSION, istio: ISTIO_VERSION, envoy: PROXY_ENVOY_VERSION, haproxy: r.run.result.lb },
  };
}

type Slices = ClusterRun['slices'];
function firstWhen(r: ClusterRun, service: string, pod: string, cond: (e: Slices[number]['endpoints'][number]) => boolean, afterMs: number): number | null {
  return r.slices.find((s) => s.service === service && s.atMs >= afterMs && s.endpoints.some((e) => e.pod === pod && cond(e)))?.atMs ?? null;
}
function goneAt(r: ClusterRun, service: string, pod: string, afterMs: number): number | null {
  const latest = new Map<string, Slices[number]>();
  for (const s of r.slices) {
    if (s.service !== service) continue;
    latest.set(s.slice, s);
    if (s.atMs < afterMs) continue;
    if (![...latest.values()].some((x) => x.endpoints.some((e) => e.pod === pod))) return s.atMs;
  }
  return null;
}

/**
 * docs/cluster.md's generated blocks and the README's real-cluster section, rendered from
 * docs/cluster/results.json (report-main.ts measures it; test/proof/cluster-docs.test.ts holds the docs
 * to it). Every number in those blocks comes from the results file.
 */
import { spliceBetween } from '../harness/render';
import type { KubeletComparison } from './kubelet-model';
import type { FinalScrape, LongDrain, ProbeLoad } from './measurements';
import type { PodTimeline, RunSummary } from './results';
import type { StartHalfResults } from './start-half';
import type { ClusterAction } from './termination';

export type ClusterResults = {
  generated: { at: string; machine: string; versions: { kubernetes: string; istio: string; envoy: string; haproxy: string; containerd: string } };
  runs: RunSummary[];
  variants: RunSummary[];
  kubeletModel: KubeletComparison[];
  probeLoad: ProbeLoad;
  longDrain: LongDrain[];
  finalScrape: FinalScrape;
  /** The GitOps rollout: a commit synced by Argo CD under load (argocd/session.ts); absent in results measured before it. */
  argocd?: { version: string; runs: RunSummary[] };
  /** The start half of rollouts (start-half.ts): each new pod's timeline, with and without the start hold; absent before issue 50. */
  startHalf?: StartHalfResults;
};

export const CLUSTER_MARKERS = {
  versions: ['<!-- generated from docs/cluster/results.json: versions -->', '<!-- end versions -->'],
  runs: ['<!-- generated from docs/cluster/results.json: runs -->', '<!-- end runs -->'],
  kubelet: ['<!-- generated from docs/cluster/results.json: kubelet -->', '<!-- end kubelet -->'],
  proxy: ['<!-- generated from docs/cluster/results.json: kube-proxy -->', '<!-- end kube-proxy -->'],
  pilotAgent: ['<!-- generated from docs/cluster/results.json: pilot-agent -->', '<!-- end pilot-agent -->'],
  hcPreStop: ['<!-- generated from docs/cluster/results.json: hc-prestop -->', '<!-- end hc-prestop -->'],
  longDrain: ['<!-- generated from docs/cluster/results.json: long-drain -->', '<!-- end long-drain -->'],
  finalScrape: ['<!-- generated from docs/cluster/results.json: final-scrape -->', '<!-- end final-scrape -->'],
  probeLoad: ['<!-- generated from docs/cluster/results.json: probe-load -->', '<!-- end probe-load -->'],
  startHalf: ['<!-- generated from docs/cluster/results.json: start-half -->', '<!-- end start-half -->'],
} as const;

export const README_CLUSTER_MARKERS = ['<!-- generated from docs/cluster/results.json: cluster-proof -->', '<!-- end cluster-proof -->'] as const;

const sec = (v: number | null | undefined): string => (v === null || v === undefined || Number.isNaN(v) ? '-' : `${(v / 1000).toFixed(2)} s`);
const range = (xs: Array<number | null>): string => {
  const v = xs.filter((x): x is number => x !== null && !Number.isNaN(x));
  if (v.length === 0) return '-';
  const lo = Math.min(...v);
  const hi = Math.max(...v);
  return lo === hi ? `${Math.round(lo)} ms` : `${Math.round(lo)}-${Math.round(hi)} ms`;
};
const lost = (r: RunSummary): string =>
  r.failureTotal === 0
    ? '0'
    : `${r.failureTotal} (${Object.entries(r.failures)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ')})`;
const pods = (rs: RunSummary[]): PodTimeline[] => rs.flatMap((r) => r.pods);

export function renderVersions(res: ClusterResults): string {
  const v = res.generated.versions;
  return `Measured on ${res.generated.at.slice(0, 10)} (${res.generated.machine}): Kubernetes ${v.kubernetes} (kube-apiserver, controller-manager, scheduler, kubelet, kube-proxy in iptables mode), containerd ${v.containerd} with runc and the bridge CNI plugin, Istio ${v.istio} (istiod and pilot-agent built from Istio's release-1.31 source) with Envoy ${v.envoy} in the proxy image, and ${v.haproxy} as the external LB, all real; three nodes, one network namespace each, and a fourth namespace for the LB and the clients.`;
}

/** The action as the tables name it: the GitOps rollout's is a commit that Argo CD syncs. */
const actionText = (r: RunSummary, res: ClusterResults): string =>
  r.action === 'sync' ? `git commit, synced by Argo CD ${res.argocd?.version ?? ''}`.trim() : r.action;

export function renderRuns(res: ClusterResults): string {
  const rows = [...res.runs, ...(res.argocd?.runs ?? [])].map((r) => {
    const p = r.pods;
    return `| ${r.session} | ${actionText(r, res)} | ${r.sequence} | ${r.lbSetting} | ${r.chart}${r.hcSidecar === 'native' ? ', native hc' : ''} | ${r.requests} | ${lost(r)} | ${range(p.map((x) => x.sequenceStartLagMs))} | ${range(p.map((x) => (x.closedMs !== null && x.drainStartMs !== null ? x.closedMs - x.drainStartMs : null)))} | ${range(p.map((x) => (x.proxyExitMs !== null && x.proxySigtermMs !== null ? x.proxyExitMs - x.proxySigtermMs : null)))} | ${p.reduce((n, x) => n + x.sigkills, 0)} | ${sec(r.settledMs)} |`;
  });
  return [
    '| session | action | sequence | LB setting | chart | requests | lost | preStop to sequence start | drain [3] to CLOSED | proxy SIGTERM to exit | SIGKILLs | action to settled |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** The pods of single deletions (a rollout's or a scale-down's later pods start their hooks later by design). */
const deletions = (res: ClusterResults): PodTimeline[] => pods(res.runs.filter((r) => r.action === 'delete' || r.action === 'evict'));

export function renderKubelet(res: ClusterResults): string {
  const all = deletions(res);
  const hookStart = range(all.map((p) => p.preStopStartMs));
  const rows = res.kubeletModel.flatMap((k) =>
    (['long', 'short'] as const).map((c) => {
      const r = k.real[c];
      const m = k.model[c];
      return `| ${k.native ? 'native sidecar' : 'ordinary'} | ${c === 'long' ? '2.6 s' : '0.9 s'} | ${r.hookEnd} / ${m.hookEnd} | ${r.sigterm} / ${m.sigterm} | ${r.sigkill ?? '-'} / ${m.sigkill ?? '-'} | ${r.exit} / ${m.exit} |`;
    }),
  );
  return [
    `Both preStop hooks of a deleted or evicted gateway pod started together, ${hookStart} after the API call returned (the kubelet's log). Each container got SIGTERM when its own hook returned. The harness's kubelet model against the real one, on a pod of two containers that ignore SIGTERM, grace period 6 s (ms after the first hook start, real / model):`,
    '',
    '| containers | hook | hook end | SIGTERM | SIGKILL | exit |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

export function renderProxy(res: ClusterResults): string {
  const all = deletions(res);
  const cluster = res.variants.filter((v) => v.session === 'variant-cluster-policy');
  const clusterLost = cluster.reduce((n, r) => n + r.failureTotal, 0);
  const clusterReq = cluster.reduce((n, r) => n + r.requests, 0);
  const localRuns = res.runs.filter((r) => r.session === 'drain-first' && r.action === 'delete');
  return [
    `With the gateway Service at \`externalTrafficPolicy: Cluster\` (the chart's default), drain-first behind HAProxy lost ${clusterLost} of ${clusterReq} requests over ${cluster.length} deletions; with \`Local\` (what the plan sets now) the same deletion lost ${localRuns.reduce((n, r) => n + r.failureTotal, 0)} of ${localRuns.reduce((n, r) => n + r.requests, 0)}.`,
    `A deleted or evicted pod showed as terminating in the health Service's EndpointSlice ${range(all.map((p) => p.healthTerminatingMs))} after the API call and left it ${range(all.map((p) => p.healthGoneMs))} after (with the pod); the health Service publishes not-ready addresses, so the pod stayed ready there for as long as it existed. In the gateway Service's slice it was not ready from ${range(all.map((p) => p.gatewayNotReadyMs))} (a terminating pod never is; kube-proxy's Local policy keeps sending to a terminating, serving pod when the node has no other) and gone ${range(all.map((p) => p.gatewayGoneMs))} after the delete.`,
  ].join('\n');
}

export function renderPilotAgent(res: ClusterResults): string {
  const all = pods(res.runs.filter((r) => r.session !== 'article-order'));
  const lines = [...new Set(all.flatMap((p) => p.pilotAgent.map((l) => l.text.replace(/^\S+\s+(info|warn|error)\s+/, '').slice(0, 120))))].slice(0, 6);
  return [
    `After its SIGTERM istio-proxy exited ${range(all.map((p) => (p.proxyExitMs !== null && p.proxySigtermMs !== null ? p.proxyExitMs - p.proxySigtermMs : null)))} later (terminationDrainDuration 0.5 s in the lab plan). pilot-agent's own lines in that time:`,
    '',
    ...lines.map((l) => `- \`${l.replace(/`/g, "'")}\``),
  ].join('\n');
}

export function renderHcPreStop(res: ClusterResults): string {
  const exec = pods(res.variants.filter((v) => v.session === 'variant-hc-exec'));
  const http = pods(res.runs.filter((r) => r.session !== 'article-order'));
  const cpu = (ps: PodTimeline[], f: (c: NonNullable<PodTimeline['hcCpu']>) => number) => range(ps.map((p) => (p.hcCpu ? f(p.hcCpu) : null)));
  return [
    '| hc preStop | pods | preStop to sequence start | hc CPU over the termination | CFS throttling |',
    '|---|---|---|---|---|',
    `| \`exec gracegate drain\` (before) | ${exec.length} | ${range(exec.map((p) => p.sequenceStartLagMs))} | ${cpu(exec, (c) => c.usageMs)} | ${cpu(exec, (c) => c.throttledMs)} |`,
    `| \`httpGet /hc-stopping\` (now) | ${http.length} | ${range(http.map((p) => p.sequenceStartLagMs))} | ${cpu(http, (c) => c.usageMs)} | ${cpu(http, (c) => c.throttledMs)} |`,
  ].join('\n');
}

export function renderLongDrain(res: ClusterResults): string {
  return [
    '| sequence | LB setting | istio-proxy readiness failed | gateway slice: serving false | health slice: serving false | health slice kept the pod ready | drain [3] to CLOSED | the long request |',
    '|---|---|---|---|---|---|---|---|',
    ...res.longDrain.map(
      (d) =>
        `| ${d.sequence} | ${d.lbSetting} | ${sec(d.proxyReadinessFailedMs)} | ${sec(d.gatewayNotServingMs)} | ${sec(d.healthNotServingMs)} | ${d.healthReadyUntilGone ? 'yes' : 'no'} | ${sec(d.drainToExitMs)} | ${d.longRequestOutcome} |`,
    ),
    '',
    'Times after the proxy drain [3]; "-": did not happen while the pod existed.',
  ].join('\n');
}

export function renderFinalScrape(res: ClusterResults): string {
  const f = res.finalScrape;
  const when = (x: number) => (x < 0 ? `${-x} ms before` : `${x} ms after`);
  return `A rollout of two pods planned with Prometheus (final-scrape bound ${f.boundSeconds} s) where nothing scrapes /metrics: the hc exited ${f.hcExitAfterProxyMs.map(when).join(' and ')} istio-proxy (before this change each waited the whole bound, ${f.boundSeconds} s a pod, after its SIGTERM); the rollout settled ${sec(f.rolloutMs)} after \`kubectl rollout restart\`.`;
}

export function renderProbeLoad(res: ClusterResults): string {
  const p = res.probeLoad;
  return `The hc container idle: ${p.idle.cpuMsPerSecond} ms of CPU a second. Under ${p.load.workers} keep-alive probers of \`/health_check.html\` through the health NodePort (${p.load.probesPerSecond} probes/s for ${p.seconds} s, p99 ${p.load.p99Ms} ms, ${p.load.failures} failed): ${p.load.cpuMsPerSecond} ms of CPU a second, ${p.hcCpuLimit === null ? `throttled ${p.load.throttledMsPerSecond} ms a second (no CPU limit)` : `throttled ${p.load.throttledMsPerSecond} ms a second by its ${p.hcCpuLimit} limit`}; peak memory ${p.maxMemoryMiB} MiB.`;
}

const ms = (v: number | null): string => (v === null ? '-' : `${v}`);

/**
 * Each session's rollout times against their lower bound (start-half.ts rolloutTime): the ratio's
 * range and median over the rollouts whose witnesses were all there.
 */
function renderRolloutTimes(sh: StartHalfResults): string {
  const rows = sh.sessions.flatMap((s) => {
    const rollouts = s.runs.filter((r) => r.action === 'rollout');
    const timed = rollouts.flatMap((r) => (r.rolloutTime ? [r.rolloutTime] : []));
    if (timed.length === 0) return [];
    const ratios = timed.map((t) => t.ratio).sort((a, b) => a - b);
    const median = ratios[Math.floor((ratios.length - 1) / 2)]!;
    const durations = timed.map((t) => t.durationMs);
    const bounds = timed.map((t) => t.lowerBoundMs);
    return [
      `| ${s.hold} | ${s.lbSetting} | ${timed.length} of ${rollouts.length} | ${Math.min(...durations)} to ${Math.max(...durations)} ms | ${Math.min(...bounds)} to ${Math.max(...bounds)} ms | ${ratios[0]} to ${ratios.at(-1)} (median ${median}) |`,
    ];
  });
  if (rows.length === 0) return '';
  const split = renderRolloutSplit(sh);
  return [
    "Each rollout's time beside its lower bound (issue 50, item 5): from `kubectl rollout restart` to the later of the last old pod's exit and the last new pod's UP at the LB, against what no order avoids, pod by pod and in turn (one pod per node): each new pod's start, from bound to its node to Ready, the LB's rise (rise x inter) and detection (fall x inter) for each pod, and each old pod's drain (its drain start to in-flight 0). A rollout counts where every one of these was witnessed.",
    '',
    '| sidecar | LB setting | rollouts timed | rollout | lower bound | ratio |',
    '|---|---|---|---|---|---|',
    ...rows,
    ...(split ? ['', split] : []),
  ].join('\n');
}

/**
 * The ratio's excess over 1, term by term (start-half.ts rolloutChain): each term as a share of the
 * rollout's own bound, the mean over the rollouts whose chain was witnessed, so 1 plus the terms is
 * the mean ratio.
 */
function renderRolloutSplit(sh: StartHalfResults): string {
  const rows = sh.sessions.flatMap((s) => {
    const timed = s.runs.flatMap((r) => (r.action === 'rollout' && r.rolloutTime?.chain ? [{ t: r.rolloutTime, c: r.rolloutTime.chain }] : []));
    if (timed.length === 0) return [];
    const mean = (f: (x: (typeof timed)[number]) => number): number => timed.reduce((n, x) => n + f(x), 0) / timed.length;
    const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
    const share = (f: (x: (typeof timed)[number]) => number): string => {
      const ms = Math.round(mean(f));
      const v = mean((x) => f(x) / x.t.lowerBoundMs);
      return `${v < 0 ? '-' : '+'}${Math.abs(v).toFixed(2)} (${ms} ms)`;
    };
    const minReady = timed[0]!.c.minReadyMs / timed[0]!.t.terms.startToReadyMs.length;
    return [
      `| ${s.hold} | ${s.lbSetting} | ${timed.length} | ${mean((x) => x.t.durationMs / x.t.lowerBoundMs).toFixed(2)} | ${share((x) => x.c.reactionsMs)} | ${share((x) => x.c.minReadyMs - x.t.terms.startToReadyMs.length * x.t.terms.lbRiseMs)} (minReadySeconds ${minReady / 1000} s, rise ${timed[0]!.t.terms.lbRiseMs} ms) | ${share((x) => x.c.leavingMs - x.t.terms.drainMs.length * x.t.terms.lbDetectMs - sum(x.t.terms.drainMs))} | ${share((x) => x.c.tailMs)} |`,
    ];
  });
  if (rows.length === 0) return '';
  return [
    "Where the time above the bound goes, term by term, along the chain the pods ran in (new pod bound to a node, Ready, available after minReadySeconds; then the Deployment takes an old pod, which leaves; the next new pod takes its node): each term a share of the rollout's own bound, the mean over the rollouts, so 1 plus the terms is the mean ratio (each rounded). Kubernetes' reactions: the Deployment creating each new pod and the scheduler binding it once its node is free, and the Deployment taking the next old pod after minReadySeconds. minReadySeconds beyond the LB's rise: the plan's wait after each Ready (the start hold and the margin, beside the rise the bound counts). The leaving beyond the LB's detection and the drain: the rest of each old pod's preStop to its exit (the LB buffer, the proxy's exit). The last UP: the last new pod taken in by the LB after the last old pod left.",
    '',
    "| sidecar | LB setting | rollouts | mean ratio | Kubernetes' reactions | minReadySeconds beyond the LB's rise | leaving beyond detection and drain | last UP after the last exit |",
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** The start half: each session's windows and losses, the hold's path, and the first rollout's pods in order. */
export function renderStartHalf(res: ClusterResults): string {
  const sh = res.startHalf;
  if (!sh) return 'Not measured yet.';
  const rows = sh.sessions.map((s) => {
    const rollouts = s.runs.filter((r) => r.action === 'rollout').length;
    const scaleUps = s.runs.filter((r) => r.action === 'scale-up');
    const scaleUpText = scaleUps.length
      ? scaleUps
          .map((r) => `${r.arrivals.map((a) => (a.windowMs === null ? '-' : `${a.windowMs} ms`)).join(', ') || '-'}, ${r.failures.length} lost`)
          .join('; ')
      : '-';
    const arrivals = s.runs.flatMap((r) => r.arrivals);
    const windows = arrivals.map((a) => a.windowMs).filter((w): w is number => w !== null);
    const failures = s.runs.flatMap((r) => r.failures);
    const byHalf = (half: string) => {
      const f = failures.filter((x) => x.half === half);
      const states = [...new Set(f.map((x) => x.terminationState ?? 'no LB line'))];
      return f.length === 0 ? '0' : `${f.length} (${states.join(', ')})`;
    };
    return `| ${s.hold} | ${s.lbSetting} | ${rollouts} | ${scaleUpText} | ${arrivals.length} | ${windows.filter((w) => w > 0).length} | ${windows.length ? `${Math.min(...windows)} to ${Math.max(...windows)} ms` : '-'} | ${s.runs.reduce((n, r) => n + r.requests, 0)} | ${byHalf('start')} | ${byHalf('termination')} | ${byHalf('before-the-lb')} |`;
  });
  const held = sh.sessions.filter((s) => s.held && s.probe !== 'gateway-service').flatMap((s) => s.runs.flatMap((r) => r.arrivals));
  const path = held.flatMap((a) => (a.trafficRuleMs !== null && a.hcReadinessSeenMs !== null ? [a.trafficRuleMs - a.hcReadinessSeenMs] : []));
  const timeline = sh.sessions.flatMap((s) =>
    (s.runs[0]?.arrivals ?? []).map(
      (a) =>
        `| ${s.hold} | ${a.node} | ${a.createdMs} | ${ms(a.hcWarmingMs)} | ${ms(a.hcReadinessSeenMs)} | ${ms(a.hcOpenMs)} | ${ms(a.readyMs)} | ${ms(a.trafficSliceReadyMs)} | ${ms(a.healthRuleMs)} | ${ms(a.trafficRuleMs)} | ${ms(a.lbUpMs)} | ${ms(a.windowMs)} | ${a.firstRequestMs === null ? '-' : `${a.firstRequestMs} ${a.firstRequestState ?? ''}`.trim()} |`,
    ),
  );
  return [
    `Measured on ${sh.measuredAt.slice(0, 10)}, kube-proxy at its defaults (minSyncPeriod 1 s, syncPeriod 30 s), HAProxy at rise 1, every gateway pod replaced by \`kubectl rollout restart\` under 12 keep-alive clients, one rollout after another, and each session ended by \`kubectl scale\` one pod up: with one pod per node the new pod lands on the node that had none, whose traffic NodePort kube-proxy drops until its first local endpoint. Every new pod is witnessed as above. A window is the time the LB had a node UP while that node's traffic NodePort still dropped for want of a local endpoint: positive, the LB sent traffic the node dropped. Negative, the node's traffic rule led to the new pod that long before the UP; 0, it led to a pod still leaving the node, which kube-proxy serves while the node has no ready one.`,
    '',
    '| sidecar | LB setting | rollouts | scale-up: window, lost | new pods | windows > 0 | windows | requests | lost: start half | lost: termination half | lost before the LB |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    renderRolloutTimes(sh),
    '',
    path.length
      ? `With the start hold, from the kubelet's readiness probe answered to the node's traffic rule leading to the pod took ${Math.min(...path)} to ${Math.max(...path)} ms (${path.length} pods): within kube-proxy's minSyncPeriod 1 s and the measured propagation ${sh.propagationSeconds} s, the hold the plan derives (startHoldSeconds ${sh.holdSeconds} s).`
      : '',
    '',
    "The first rollout of each session, every new pod in order (ms after `kubectl rollout restart`; the rule times are `nft monitor`'s reports, the slice and Ready times a `kubectl get -w`'s arrivals, which lag under load):",
    '',
    '| sidecar | node | created | hc WARMING | readiness probe | hc OPEN (first 200) | Ready | traffic slice | health rule | traffic rule | LB UP | window | first request |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...timeline,
  ].join('\n');
}

export function renderClusterMd(doc: string, res: ClusterResults): string {
  const blocks: Array<[readonly [string, string], string]> = [
    [CLUSTER_MARKERS.versions, renderVersions(res)],
    [CLUSTER_MARKERS.runs, renderRuns(res)],
    [CLUSTER_MARKERS.kubelet, renderKubelet(res)],
    [CLUSTER_MARKERS.proxy, renderProxy(res)],
    [CLUSTER_MARKERS.pilotAgent, renderPilotAgent(res)],
    [CLUSTER_MARKERS.hcPreStop, renderHcPreStop(res)],
    [CLUSTER_MARKERS.longDrain, renderLongDrain(res)],
    [CLUSTER_MARKERS.finalScrape, renderFinalScrape(res)],
    [CLUSTER_MARKERS.probeLoad, renderProbeLoad(res)],
    [CLUSTER_MARKERS.startHalf, renderStartHalf(res)],
  ];
  return blocks.reduce((d, [m, body]) => spliceBetween(d, m, body), doc);
}

export function renderReadmeCluster(res: ClusterResults): string {
  const v = res.generated.versions;
  const gg = res.runs.filter((r) => r.session !== 'article-order');
  const contrast = res.runs.filter((r) => r.session === 'article-order');
  const rows = [...gg, ...(res.argocd?.runs ?? [])].map(
    (r) =>
      `| ${r.sequence} | ${r.lbSetting} | ${actionText(r, res)}${r.hcSidecar === 'native' ? ' (native hc)' : ''} | istio/gateway ${r.chart} | ${r.requests} req, ${lost(r)} lost |`,
  );
  return [
    `The same sequences on a real three-node Kubernetes ${v.kubernetes} with istiod and pilot-agent ${v.istio}, Envoy ${v.envoy} and ${v.haproxy} in front ([docs/cluster.md](docs/cluster.md); \`npm test\` runs every row as assertions, on the witnesses of the kubelet, containerd, HAProxy and the sidecar; measured ${res.generated.at.slice(0, 10)}):`,
    '',
    '| sequence | LB setting | what the user did | chart | result |',
    '|---|---|---|---|---|',
    ...rows,
    ...contrast.map((r) => `| article order (contrast) | ${r.lbSetting} | ${r.action} | istio/gateway ${r.chart} | ${r.requests} req, ${lost(r)} lost |`),
    ...startHalfRow(res),
  ].join('\n');
}

/**
 * The start half in one row of the README's table (its 200 lines hold no more): per layout (as
 * before issue 50, the start hold, the health port on the gateway's Service), the requests, the
 * lost and the new pods the LB had UP before their node's traffic rule, every LB setting together.
 */
function startHalfRow(res: ClusterResults): string[] {
  const sessions = res.startHalf?.sessions ?? [];
  if (sessions.length === 0) return [];
  const layouts = [...new Set(sessions.map((s) => s.hold))].map((hold) => {
    const runs = sessions.filter((s) => s.hold === hold).flatMap((s) => s.runs);
    const requests = runs.reduce((n, r) => n + r.requests, 0);
    const failed = runs.reduce((n, r) => n + r.failures.length, 0);
    const early = runs.flatMap((r) => r.arrivals.map((a) => a.windowMs)).filter((w): w is number => w !== null && w > 0).length;
    return `${hold}: ${requests} req, ${failed} lost, ${early} new pod(s) UP before their node's traffic rule`;
  });
  const settings = [...new Set(sessions.map((s) => s.lbSetting))].join('; ');
  const count = (action: ClusterAction) => sessions.reduce((n, s) => n + s.runs.filter((r) => r.action === action).length, 0);
  const scaleUps = count('scale-up');
  const actions = `${count('rollout')} x rollout${scaleUps ? `, ${scaleUps} x scale-up onto a node that had none` : ''}`;
  return [`| start half (new pods) | ${settings} | ${actions} | istio/gateway 1.27.9 | ${layouts.join('; ')} |`];
}

export function renderReadmeWithCluster(readme: string, res: ClusterResults): string {
  return spliceBetween(readme, README_CLUSTER_MARKERS, renderReadmeCluster(res));
}

/**
 * synth's Prometheus files on the real cluster: a real Prometheus (Debian's package) in the
 * cluster's outside namespace runs `prometheus-scrape.yaml` and `prometheus-rules.yaml` as synth
 * wrote them and scrapes the live sidecar's /metrics and Envoy's /stats/prometheus through the pod
 * IPs, as a Prometheus beside a real cluster does.
 *
 * One part is not Prometheus's own: Debian's Prometheus 2.42 is built without Kubernetes service
 * discovery (it refuses `kubernetes_sd_configs`). The job's `kubernetes_sd_configs` is replaced by a
 * `file_sd_configs` file this module keeps as Kubernetes SD's pod role would discover (one target
 * per container port of every pod with an IP in the job's namespaces, with the
 * `__meta_kubernetes_*` labels of that role), read from the API server every second. The job's
 * relabelling, which picks the gateway's pods, ports, metrics path and target labels, runs
 * unchanged over those labels.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { alertRuleGroups } from '../../../../src/emit/monitoring/alert-rules';
import { monitoringTargets } from '../../../../src/emit/monitoring/targets';
import type { Plan } from '../../../../src/plan/plan-gateway';
import { startPrometheus, type Prometheus, type Sample } from '../../../support/prometheus';
import type { Installed } from '../gateway';
import { gatewayPods } from '../gateway';
import { clusterEnv } from '../kubectl';
import { OUTSIDE, PROXY_ENVOY_VERSIONS } from '../layout';
import { inNetns, netnsPrefix, sleep, waitUntil } from '../sh';
import type { ClusterRun } from '../termination';

type PodJson = {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ kind: string; name: string; controller?: boolean }>;
  };
  spec: {
    nodeName?: string;
    containers: ContainerJson[];
    initContainers?: ContainerJson[];
  };
  status: { podIP?: string; hostIP?: string; phase?: string; conditions?: Array<{ type: string; status: string }> };
};
type ContainerJson = { name: string; image?: string; ports?: Array<{ name?: string; containerPort: number; protocol?: string }> };
export type TargetGroup = { targets: string[]; labels: Record<string, string> };

/** As Prometheus names a Kubernetes label or annotation in a meta label (strutil.SanitizeLabelName). */
const sanitize = (name: string): string => name.replace(/[^a-zA-Z0-9_]/g, '_');

/** What Kubernetes SD's pod role makes of one pod: a target per container port (a container without ports: one without a port). */
export function podTargetGroups(pod: PodJson): TargetGroup[] {
  const ip = pod.status.podIP;
  if (!ip) return [];
  const controller = pod.metadata.ownerReferences?.find((o) => o.controller);
  const base: Record<string, string> = {
    __meta_kubernetes_namespace: pod.metadata.namespace,
    __meta_kubernetes_pod_name: pod.metadata.name,
    __meta_kubernetes_pod_ip: ip,
    __meta_kubernetes_pod_uid: pod.metadata.uid,
    __meta_kubernetes_pod_node_name: pod.spec.nodeName ?? '',
    __meta_kubernetes_pod_host_ip: pod.status.hostIP ?? '',
    __meta_kubernetes_pod_phase: pod.status.phase ?? '',
    __meta_kubernetes_pod_ready: pod.status.conditions?.find((c) => c.type === 'Ready')?.status.toLowerCase() ?? 'unknown',
    ...(controller ? { __meta_kubernetes_pod_controller_kind: controller.kind, __meta_kubernetes_pod_controller_name: controller.name } : {}),
  };
  for (const [k, v] of Object.entries(pod.metadata.labels ?? {})) {
    base[`__meta_kubernetes_pod_label_${sanitize(k)}`] = v;
    base[`__meta_kubernetes_pod_labelpresent_${sanitize(k)}`] = 'true';
  }
  for (const [k, v] of Object.entries(pod.metadata.annotations ?? {})) {
    base[`__meta_kubernetes_pod_annotation_${sanitize(k)}`] = v;
    base[`__meta_kubernetes_pod_annotationpresent_${sanitize(k)}`] = 'true';
  }
  const groups: TargetGroup[] = [];
  const containers = [...(pod.spec.initContainers ?? []).map((c) => ({ c, init: true })), ...pod.spec.containers.map((c) => ({ c, init: false }))];
  for (const { c, init } of containers) {
    const own = {
      ...base,
      __meta_kubernetes_pod_container_name: c.name,
      __meta_kubernetes_pod_container_image: c.image ?? '',
      __meta_kubernetes_pod_container_init: String(init),
    };
    if (!c.ports?.length) {
      groups.push({ targets: [ip], labels: own });
      continue;
    }
    for (const p of c.ports)
      groups.push({
        targets: [`${ip}:${p.containerPort}`],
        labels: {
          ...own,
          __meta_kubernetes_pod_container_port_name: p.name ?? '',
          __meta_kubernetes_pod_container_port_number: String(p.containerPort),
          __meta_kubernetes_pod_container_port_protocol: p.protocol ?? 'TCP',
        },
      });
  }
  return groups;
}

/** Keeps a file_sd file as Kubernetes SD's pod role would see the namespaces, every `everyMs`. */
class PodDiscovery {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private inFlight: Promise<void> = Promise.resolve();
  errors = 0;

  constructor(
    private readonly namespaces: readonly string[],
    readonly file: string,
    private readonly everyMs = 1000,
  ) {}

  /** One refresh (kubectl in the outside namespace, bounded; never two at once). */
  refresh(): Promise<void> {
    this.inFlight = this.inFlight
      .then(async () => {
        const groups = (await Promise.all(this.namespaces.map((ns) => listPods(ns)))).flat().flatMap(podTargetGroups);
        const tmp = `${this.file}.tmp`;
        writeFileSync(tmp, JSON.stringify(groups));
        renameSync(tmp, this.file);
      })
      .catch(() => {
        this.errors++;
      });
    return this.inFlight;
  }

  async start(): Promise<void> {
    await this.refresh();
    const tick = () => {
      if (this.stopped) return;
      void this.refresh().then(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.everyMs);
      });
    };
    this.timer = setTimeout(tick, this.everyMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight;
  }
}

function listPods(namespace: string): Promise<PodJson[]> {
  const [cmd, ...args] = inNetns(OUTSIDE.netns, 'kubectl', ['-n', namespace, 'get', 'pods', '-o', 'json']);
  return new Promise((resolve, reject) => {
    execFile(cmd!, args, { env: clusterEnv(), timeout: 10_000, maxBuffer: 32 * 1024 * 1024, encoding: 'utf8' }, (err, stdout) => {
      if (err) return reject(err);
      resolve((JSON.parse(stdout) as { items: PodJson[] }).items);
    });
  });
}

/** Prometheus with the discovery that feeds it; stop() ends both. */
export type LivePrometheus = Prometheus & { discoveryErrors(): number };

type ScrapeJob = { job_name: string; kubernetes_sd_configs?: Array<Record<string, unknown>>; file_sd_configs?: unknown } & Record<string, unknown>;

/**
 * Starts Prometheus in the outside namespace with synth's files from `synthDir`, and waits until
 * it scrapes both endpoints (sidecar, Envoy) of every gateway pod.
 */
export async function startLivePrometheus(g: Installed, synthDir: string): Promise<LivePrometheus> {
  const jobs = parseYaml(readFileSync(join(synthDir, 'prometheus-scrape.yaml'), 'utf8')) as ScrapeJob[];
  if (!Array.isArray(jobs) || jobs.length === 0) throw new Error(`${synthDir}/prometheus-scrape.yaml holds no scrape job`);
  const dir = mkdtempSync(join(tmpdir(), 'gracegate-live-sd-'));
  const discoveries: PodDiscovery[] = [];
  jobs.forEach((job, i) => {
    const sd = job.kubernetes_sd_configs ?? [];
    if (sd.length !== 1 || sd[0]!.role !== 'pod') throw new Error(`${job.job_name}: expected one kubernetes_sd_configs of role pod, got ${JSON.stringify(sd)}`);
    const names = (sd[0]!.namespaces as { names?: string[] } | undefined)?.names ?? [g.options.namespace];
    const discovery = new PodDiscovery(names, join(dir, `job-${i}.json`));
    discoveries.push(discovery);
    delete job.kubernetes_sd_configs;
    job.file_sd_configs = [{ files: [discovery.file], refresh_interval: '1s' }];
  });
  const stopDiscovery = async () => {
    await Promise.all(discoveries.map((d) => d.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  await Promise.all(discoveries.map((d) => d.start()));
  const rules = readFileSync(join(synthDir, 'prometheus-rules.yaml'), 'utf8');
  let prometheus: Prometheus;
  try {
    prometheus = await startPrometheus(
      { global: { scrape_timeout: '900ms', evaluation_interval: '1s' }, scrape_configs: jobs },
      { 'prometheus-rules.yaml': rules },
      { prefix: netnsPrefix(OUTSIDE.netns) },
    );
  } catch (err) {
    await stopDiscovery();
    throw err;
  }
  const live: LivePrometheus = {
    ...prometheus,
    discoveryErrors: () => discoveries.reduce((n, d) => n + d.errors, 0),
    stop: async () => {
      await stopDiscovery();
      await prometheus.stop();
    },
  };
  try {
    await waitUntil(
      "Prometheus scraping every gateway pod's sidecar and Envoy",
      90_000,
      async () => {
        const pods = new Set(gatewayPods(g).map((p) => p.name));
        const up = (await prometheus.targets()).filter((t) => t.health === 'up' && pods.has(t.labels['pod'] ?? ''));
        return pods.size > 0 && up.length === pods.size * 2 ? true : undefined;
      },
      1000,
    );
  } catch (err) {
    const targets = await prometheus.targets().catch(() => []);
    await live.stop();
    throw new Error(`${(err as Error).message}; targets: ${JSON.stringify(targets)}; log: ${prometheus.logs().slice(-2000)}`);
  }
  return live;
}

/** What Prometheus holds of one pod's termination, and what it should (each mismatch named). */
export type TerminationMetrics = { problems: string[]; report: string };

/**
 * After one pod left: its drain reached Prometheus with the values of its state file, the final
 * scrape saw CLOSED, Envoy's series of the same pod are there, no alert of the rule file is pending
 * or firing and no rule's expression returns a series, and the pod's series go stale once it is gone.
 */
export async function terminationMetrics(prometheus: LivePrometheus, plan: Plan, left: ClusterRun['leaving'][number]): Promise<TerminationMetrics> {
  const problems: string[] = [];
  const m = `${monitoringTargets(plan).matcher},pod="${left.pod.name}"`;
  const one = async (expr: string): Promise<number | null> => {
    const r = await prometheus.query(expr);
    if (r.length !== 1) {
      problems.push(`${expr}: ${r.length} series (${JSON.stringify(r).slice(0, 300)})`);
      return null;
    }
    return Number(r[0]!.value![1]);
  };
  const expect = async (expr: string, want: number, tolerance = 0): Promise<number | null> => {
    const got = await one(expr);
    if (got !== null && Math.abs(got - want) > tolerance) problems.push(`${expr}: ${got}, expected ${want}`);
    return got;
  };
  // Two rule evaluations after the last scrape.
  await sleep(2500);
  const events = left.state?.events;
  const drainS = events?.proxyDrainStarts && events.inFlightZero ? (events.inFlightZero.at - events.proxyDrainStarts.at) / 1000 : null;
  if (drainS === null) problems.push(`the state file has no [3] and [4]: ${JSON.stringify(events)}`);
  await expect(`max_over_time(gracegate_hc_drain_duration_seconds_count{${m}}[10m])`, 1);
  const drain = drainS === null ? null : await expect(`max_over_time(gracegate_hc_drain_duration_seconds_sum{${m}}[10m])`, drainS, 0.002);
  await expect(`max_over_time(gracegate_hc_drain_timeouts_total{${m}}[10m])`, 0);
  await expect(`max_over_time(gracegate_hc_terminating{${m}}[10m])`, 1);
  await expect(`last_over_time(gracegate_hc_state{${m},state="CLOSED"}[10m])`, 1);
  // (That last sample is the final scrape's: the sidecar's log line saying so is not asserted, as the
  // copy of its log can miss the lines written a moment before the kubelet removes the pod.)
  const info = await prometheus.query(`last_over_time(gracegate_hc_info{${m}}[10m])`);
  const labels = info[0]?.metric ?? {};
  if (labels['sequence'] !== plan.sequence) problems.push(`gracegate_hc_info sequence ${labels['sequence']}, planned ${plan.sequence}`);
  const envoyVersion = labels['envoy_version'] ?? '';
  if (!PROXY_ENVOY_VERSIONS.some((v) => envoyVersion.startsWith(v)))
    problems.push(`gracegate_hc_info envoy_version ${envoyVersion}: not the proxy image's Envoy`);
  // Envoy's series the alerts read (the pod changes' stats matcher keeps only those): present for
  // the leaving pod, and neither grew from the deletion to the pod's last scrape (no 5xx answered,
  // no client cut an active request).
  const deletedAt = Math.min(...left.containers.map((c) => c.preStopStartMs ?? Number.POSITIVE_INFINITY)) / 1000;
  const envoySeries: Record<string, number | null> = {};
  for (const series of ['envoy_http_downstream_rq{response_code_class="5xx"}', 'envoy_http_downstream_cx_destroy_remote_active_rq']) {
    const sel = series.includes('{') ? series.replace('{', `{${m},container="istio-proxy",`) : `${series}{${m},container="istio-proxy"}`;
    const before = await prometheus.query(`sum(last_over_time(${sel}[10m]))`, deletedAt);
    const last = await prometheus.query(`sum(last_over_time(${sel}[10m]))`);
    if (before.length !== 1 || last.length !== 1) {
      const names = (await prometheus.query(`count by (__name__, response_code_class) (last_over_time({${m},container="istio-proxy"}[10m]))`)).map((x) =>
        JSON.stringify(x.metric),
      );
      problems.push(`${sel}: not scraped from the leaving pod's Envoy (its series: ${names.join(' ')})`);
      envoySeries[series] = null;
      continue;
    }
    const grew = Number(last[0]!.value![1]) - Number(before[0]!.value![1]);
    envoySeries[series] = grew;
    if (grew !== 0) problems.push(`${sel} grew by ${grew} from the deletion to the pod's last scrape`);
  }
  const rules = alertRuleGroups(plan).flatMap((g) => g.rules);
  const fired: Sample[] = [];
  for (const rule of rules) fired.push(...(await prometheus.query(rule.expr)).map((s) => ({ ...s, metric: { ...s.metric, alertname: rule.alert } })));
  if (fired.length > 0) problems.push(`rule expressions returned series after a lossless termination: ${JSON.stringify(fired).slice(0, 600)}`);
  const alerts = (await prometheus.alerts()).filter((a) => a.labels['namespace'] === plan.gateway.namespace || a.labels['gateway'] === plan.gateway.name);
  if (alerts.length > 0) problems.push(`alerts pending or firing: ${JSON.stringify(alerts)}`);
  // The pod is gone: its series are marked stale at the first scrape that fails (or discovery drops it).
  await waitUntil(
    "the gone pod's series stale in Prometheus",
    20_000,
    async () => ((await prometheus.query(`gracegate_hc_state{${m}}`)).length === 0 ? true : undefined),
    500,
  ).catch((err: Error) => problems.push(err.message));
  if (prometheus.discoveryErrors() > 0) problems.push(`${prometheus.discoveryErrors()} pod listings for the discovery file failed`);
  return {
    problems,
    report: `Prometheus 2.42 (synth's scrape job and rules; its pod discovery from the API server as a file; scrapes through the pod IPs): ${left.pod.name} drain ${drain ?? '?'} s (state file ${drainS ?? '?'} s), final scrape CLOSED, Envoy ${envoyVersion}'s 5xx and client-cut active requests from the deletion on: ${Object.values(envoySeries).join(' and ')}, ${rules.length} rule expressions empty`,
  };
}

/**
 * The cluster's own witnesses of a termination, each read where the real component leaves it:
 *   - the sidecar's state file, read from the kubelet's emptyDir on the node's disk (what the
 *     sidecar itself persisted, last copy seen while the pod existed);
 *   - the kubelet's and containerd's records of each container: preStop start (kubelet), SIGTERM
 *     and SIGKILL (containerd: "Stop container … with signal …"), exit (containerd: the shim
 *     disconnecting), from their logs;
 *   - the EndpointSlice conditions over time (a `kubectl get -w` watch in the outside namespace);
 *   - the pod's Kubernetes events (FailedPreStopHook, Killing).
 */
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { PersistedState } from '../../../src/hc/types';
import { STATE_FILE } from '../../../src/contract/hc';
import { JsonWatch } from './json-watch';
import { kubectlJson } from './kubectl';
import { NODES, dirs } from './layout';

// ---- the sidecar's state file, from the node's disk ----

/** Where the kubelet keeps pod `uid`'s emptyDir `volume` on `node`'s disk. */
export function emptyDirPath(node: string, uid: string, volume: string): string {
  const n = NODES.find((x) => x.name === node);
  if (!n) throw new Error(`no node ${node}`);
  return join(dirs.node(n).kubelet, 'pods', uid, 'volumes', 'kubernetes.io~empty-dir', volume);
}

/** Where the kubelet writes a container's log on `node`'s disk (its podLogsDir). */
export function containerLogDir(node: string, namespace: string, pod: string, uid: string, container: string): string {
  const n = NODES.find((x) => x.name === node);
  if (!n) throw new Error(`no node ${node}`);
  return join(dirs.node(n).kubelet, 'pod-logs', `${namespace}_${pod}_${uid}`, container);
}

export type WatchedPod = { name: string; uid: string; node: string; namespace: string };

/** One line of a container's CRI log: when the runtime wrote it, and the text. */
export type LogLine = { atMs: number; stream: string; text: string };

/**
 * Keeps the last copy of each pod's sidecar state file and container logs, polled every `everyMs`
 * until stopped: the kubelet removes both with the pod, so the last copy is what was written last.
 * A container's log file is held open from the moment it is seen: the runtime only appends to it,
 * so after the kubelet removes it the open file still reads to its last line, whenever the read
 * comes (a copy raced the removal under load and missed the hc's last transition, CLOSED).
 */
export class PodFiles {
  private readonly states = new Map<string, PersistedState>();
  private readonly logs = new Map<string, string>();
  private readonly watchers = new Map<string, FSWatcher>();
  /** Each container log file seen, held open (its descriptor), by its path; grouped by pod/container. */
  private readonly logFds = new Map<string, Map<string, number>>();
  private timer: NodeJS.Timeout | undefined;

  /**
   * Copies on every change (an inotify watch on each folder, set up as the folders appear; the
   * poll finds them and reads anything a watch missed): the sidecar writes its last state a
   * moment before the kubelet removes the folder, and a poll alone can miss that moment.
   */
  constructor(
    private readonly pods: () => WatchedPod[],
    private readonly containers: readonly string[] = [],
    everyMs = 100,
  ) {
    this.timer = setInterval(() => this.poll(), everyMs);
  }

  private watch(dir: string, read: () => void): void {
    if (this.watchers.has(dir)) return;
    try {
      const w = watch(dir, () => read());
      w.on('error', () => undefined);
      this.watchers.set(dir, w);
    } catch {
      // not there yet
    }
  }

  private readState(p: WatchedPod): void {
    const file = join(emptyDirPath(p.node, p.uid, 'gracegate-state'), STATE_FILE.split('/').pop()!);
    try {
      const next = JSON.parse(readFileSync(file, 'utf8')) as PersistedState;
      // The state only moves forward: never replace a copy with an older one.
      const prev = this.states.get(p.name);
      if (!prev || next.history.length >= prev.history.length) this.states.set(p.name, next);
    } catch {
      // not written yet, gone with the pod, or between the write and the rename: the previous copy stands
    }
  }

  private readLog(p: WatchedPod, c: string, dir: string): void {
    const key = `${p.name}/${c}`;
    const fds = this.logFds.get(key) ?? new Map<string, number>();
    this.logFds.set(key, fds);
    try {
      for (const f of readdirSync(dir).filter((x) => x.endsWith('.log'))) {
        const file = join(dir, f);
        if (!fds.has(file)) fds.set(file, openSync(file, 'r'));
      }
    } catch {
      // not there yet, or gone: the files already open still read whole
    }
    this.refresh(key);
  }

  /** Reads the held log files of `key` (pod/container) to their ends: they may have grown since. */
  private refresh(key: string): void {
    const fds = this.logFds.get(key);
    if (!fds) return;
    const text = [...fds.keys()]
      .sort()
      .map((file) => readWhole(fds.get(file)!))
      .join('');
    // A log only grows while the container lives.
    if (text.length >= (this.logs.get(key)?.length ?? 0)) this.logs.set(key, text);
  }

  /** Reads every held log to its end, then closes them. */
  private closeLogs(): void {
    for (const [key, fds] of this.logFds) {
      this.refresh(key);
      for (const fd of fds.values()) closeSync(fd);
    }
    this.logFds.clear();
  }

  private poll(): void {
    for (const p of this.pods()) {
      this.watch(emptyDirPath(p.node, p.uid, 'gracegate-state'), () => this.readState(p));
      this.readState(p);
      for (const c of this.containers) {
        const dir = containerLogDir(p.node, p.namespace, p.name, p.uid, c);
        this.watch(dir, () => this.readLog(p, c, dir));
        this.readLog(p, c, dir);
      }
    }
  }

  /**
   * The sidecar's last state file, with any transition its log has and that copy missed: the hc
   * writes both on every transition, and on a loaded machine the last write (CLOSED, moments before
   * the hc exits and the kubelet removes the emptyDir) could come after the last copy of the file.
   */
  state(pod: string): PersistedState | undefined {
    return withLoggedTransitions(this.states.get(pod), this.log(pod, 'gracegate-hc'));
  }

  /** The container's log lines (CRI format: time, stream, tag, text). */
  log(pod: string, container: string): LogLine[] {
    this.refresh(`${pod}/${container}`);
    return (this.logs.get(`${pod}/${container}`) ?? '').split('\n').flatMap((l) => {
      const m = /^(\S+) (stdout|stderr) [FP] (.*)$/.exec(l);
      return m ? [{ atMs: Date.parse(m[1]!), stream: m[2]!, text: m[3]! }] : [];
    });
  }

  stop(): void {
    this.poll();
    this.closeLogs();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}

/** An open file's whole content, from its first byte, whether or not its path still exists. */
function readWhole(fd: number): string {
  const size = fstatSync(fd).size;
  const buf = Buffer.alloc(size);
  let at = 0;
  while (at < size) {
    const n = readSync(fd, buf, at, size - at, at);
    if (n === 0) break;
    at += n;
  }
  return buf.subarray(0, at).toString('utf8');
}

// ---- the kubelet's and containerd's records ----

const KLOG = /^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6})/;
const CONTAINERD_TIME = /^time="([^"]+)"/;

function klogTime(line: string): number | null {
  const m = KLOG.exec(line);
  if (!m) return null;
  const [, mo, d, h, mi, s, us] = m;
  const year = new Date().getUTCFullYear();
  return Date.UTC(year, Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Math.floor(Number(us) / 1000));
}

function containerdTime(line: string): number | null {
  const m = CONTAINERD_TIME.exec(line);
  return m ? Date.parse(m[1]!) : null;
}

/** `state` with the transitions of the hc's log (`"msg": "A -> B"`) that come after its history, appended. */
export function withLoggedTransitions(state: PersistedState | undefined, log: readonly LogLine[]): PersistedState | undefined {
  if (!state) return state;
  const out: PersistedState = { ...state, history: [...state.history], events: { ...state.events } };
  for (const l of log) {
    let j: { time?: string; msg?: string; reason?: string };
    try {
      j = JSON.parse(l.text) as typeof j;
    } catch {
      continue;
    }
    const m = /^([A-Z]+) -> ([A-Z]+)$/.exec(j.msg ?? '');
    const at = Date.parse(j.time ?? '');
    const last = out.history.at(-1);
    if (!m || Number.isNaN(at) || (last && at <= last.at) || m[1] !== out.state) continue;
    const to = m[2] as PersistedState['state'];
    out.history.push({ state: to, at, reason: j.reason ?? '' });
    // The events the copy missed with these transitions: the hc records [3] as it enters DRAINING
    // (the drain call goes out then, machine-core's startProxyDrain) and [4] as in-flight 0 ends it.
    const fromLog = { at, estimated: false, note: "the hc's log: the state file's last copy predates it" };
    if (to === 'DRAINING' && !out.events.proxyDrainStarts) out.events.proxyDrainStarts = fromLog;
    if (m[1] === 'DRAINING' && /in-flight reached 0/.test(j.reason ?? '') && !out.events.inFlightZero) out.events.inFlightZero = fromLog;
    out.state = to;
    out.enteredAt = at;
    out.reason = j.reason ?? '';
  }
  return out;
}

function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n') : [];
}

export type ProbeFailure = { atMs: number; probe: 'Readiness' | 'Liveness' | 'Startup'; answered: boolean };

export type ContainerRecord = {
  name: string;
  id: string;
  /** kubelet: "Running preStop hook" (V(3)); null when the container had no hook. */
  preStopStartMs: number | null;
  /** kubelet: "PreStop hook completed" / "failed" / "not completed in grace period" (V(3)). */
  preStopEndMs: number | null;
  /**
   * How the hook ended, as the kubelet judged it. An httpGet hook fails only when no HTTP answer
   * came: the kubelet does not read the status (pkg/kubelet/lifecycle/handlers.go), so a 503 from
   * /wait-closed is `completed`.
   */
  preStopOutcome: 'completed' | 'failed' | 'grace-period' | null;
  /** kubelet: "Killing container with a grace period", right before it asks the runtime to stop it. */
  killingMs: number | null;
  /** containerd: the first "Stop container … with signal terminated". */
  sigtermMs: number | null;
  /** containerd: "Kill container" (SIGKILL: the grace period ran out). */
  sigkillMs: number | null;
  /** containerd: the shim of the container's task disconnected (the process exited). */
  exitMs: number | null;
  /**
   * kubelet (V(3)): "Container exited normally", when the runtime's StopContainer returned: the
   * exit as the kubelet sees it, which is what starts a native sidecar's turn. The shim's
   * disconnect (exitMs) can come later on a loaded node.
   */
  kubeletExitMs: number | null;
  /** The grace period the kubelet gave the container (seconds), from its log. */
  gracePeriodSeconds: number | null;
  /**
   * kubelet: each "Probe failed" of this container (V(1)): when, which probe, and whether an HTTP
   * answer came (a status the probe judged failing) or none (refused, timed out).
   */
  probeFailures: ProbeFailure[];
};

/** The container ids of a pod, from its status (init containers included). */
export type PodContainers = { pod: string; namespace: string; node: string; uid: string; containers: Array<{ name: string; id: string }> };

type PodJson = {
  metadata: { name: string; namespace: string; uid: string };
  spec: { nodeName?: string };
  status: { containerStatuses?: Array<{ name: string; containerID?: string }>; initContainerStatuses?: Array<{ name: string; containerID?: string }> };
};

export function podContainers(namespace: string, name: string): PodContainers {
  const p = kubectlJson<PodJson>(['-n', namespace, 'get', 'pod', name]);
  const statuses = [...(p.status.initContainerStatuses ?? []), ...(p.status.containerStatuses ?? [])];
  return {
    pod: p.metadata.name,
    namespace: p.metadata.namespace,
    node: p.spec.nodeName ?? '',
    uid: p.metadata.uid,
    containers: statuses.filter((s) => s.containerID).map((s) => ({ name: s.name, id: s.containerID!.replace(/^containerd:\/\//, '') })),
  };
}

/** What the kubelet and containerd of the pod's node logged about each of its containers. */
export function containerRecords(pc: PodContainers): ContainerRecord[] {
  const kubelet = lines(join(dirs.logs, `kubelet-${pc.node}.log`)).filter((l) => l.includes(`podUID="${pc.uid}"`));
  const containerd = lines(join(dirs.logs, `containerd-${pc.node}.log`));
  return pc.containers.map(({ name, id }) => {
    const mine = containerd.filter((l) => l.includes(id));
    const at = (re: RegExp): number | null => {
      const l = mine.find((x) => re.test(x));
      return l ? containerdTime(l) : null;
    };
    const kl = kubelet.filter((l) => l.includes(`containerName="${name}"`));
    const kat = (re: RegExp): number | null => {
      const l = kl.find((x) => re.test(x));
      return l ? klogTime(l) : null;
    };
    const killing = kl.find((x) => /Killing container with a grace period"/.test(x));
    const end = kl.find((x) => /PreStop hook (completed|failed|not completed in grace period)/.test(x));
    const outcome = end ? (/completed"/.test(end) && !/not completed/.test(end) ? 'completed' : /failed/.test(end) ? 'failed' : 'grace-period') : null;
    return {
      name,
      id,
      preStopStartMs: kat(/Running preStop hook/),
      preStopEndMs: end ? klogTime(end) : null,
      preStopOutcome: outcome,
      killingMs: killing ? klogTime(killing) : null,
      sigtermMs: at(/Stop container .* with signal terminated/),
      sigkillMs: at(/msg="Kill container /),
      exitMs: at(/shim disconnected/),
      kubeletExitMs: kat(/"Container exited normally"/),
      gracePeriodSeconds: killing ? Number(/gracePeriod=(\d+)/.exec(killing)?.[1] ?? NaN) : null,
      probeFailures: kl.flatMap((x): ProbeFailure[] => {
        const atMs = /"Probe failed"/.test(x) ? klogTime(x) : null;
        const probe = /probeType="(Readiness|Liveness|Startup)"/.exec(x)?.[1] as ProbeFailure['probe'] | undefined;
        return atMs === null || !probe ? [] : [{ atMs, probe, answered: /HTTP probe failed with statuscode/.test(x) }];
      }),
    };
  });
}

// ---- EndpointSlices over time ----

export type SliceEndpoint = {
  pod: string | null;
  node: string | null;
  address: string;
  ready: boolean | null;
  serving: boolean | null;
  terminating: boolean | null;
};
export type SliceSample = { atMs: number; slice: string; service: string; endpoints: SliceEndpoint[] };

type SliceJson = {
  metadata: { name: string; labels?: Record<string, string> };
  endpoints?: Array<{
    addresses: string[];
    nodeName?: string;
    targetRef?: { name: string };
    conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
  }>;
};

/** Every version of every EndpointSlice in a namespace, with the time it arrived (json-watch.ts). */
export class SliceWatch {
  readonly samples: SliceSample[] = [];
  private readonly watch: JsonWatch<SliceJson>;

  constructor(namespace: string) {
    this.watch = new JsonWatch<SliceJson>(['-n', namespace, 'get', 'endpointslices'], (s, atMs) => {
      if (!s.metadata?.name) return;
      this.samples.push({
        atMs,
        slice: s.metadata.name,
        service: s.metadata.labels?.['kubernetes.io/service-name'] ?? '',
        endpoints: (s.endpoints ?? []).map((e) => ({
          pod: e.targetRef?.name ?? null,
          node: e.nodeName ?? null,
          address: e.addresses[0] ?? '',
          ready: e.conditions?.ready ?? null,
          serving: e.conditions?.serving ?? null,
          terminating: e.conditions?.terminating ?? null,
        })),
      });
    });
  }

  stop(): void {
    this.watch.stop();
  }
}

/**
 * Each pod's readiness as each Service's slices showed it, ms after `t0`: when it was first listed
 * ready and when it stopped being ready. For a failure's report: a pod the health Service lists
 * ready before the traffic Service does is a node whose LB probe can pass while kube-proxy still
 * drops its traffic (externalTrafficPolicy Local).
 */
export function describeSlices(samples: readonly SliceSample[], t0: number): string {
  type Row = { service: string; slice: string; pod: string; node: string; ready?: number; notReady?: number; gone?: number };
  const seen = new Map<string, Row>();
  for (const s of samples) {
    const listed = new Set<string>();
    for (const e of s.endpoints) {
      if (e.pod === null) continue;
      listed.add(e.pod);
      const key = `${s.service}\u0000${e.pod}`;
      const row = seen.get(key) ?? { service: s.service, slice: s.slice, pod: e.pod, node: e.node ?? '?' };
      if (e.ready === true && row.ready === undefined) row.ready = s.atMs - t0;
      if (e.ready !== true && row.ready !== undefined && row.notReady === undefined) row.notReady = s.atMs - t0;
      seen.set(key, row);
    }
    for (const row of seen.values()) if (row.slice === s.slice && !listed.has(row.pod) && row.gone === undefined) row.gone = s.atMs - t0;
  }
  const at = (ms: number | undefined) => (ms === undefined ? '-' : `${ms} ms`);
  return [...seen.values()]
    .sort((a, b) => (a.ready ?? Number.POSITIVE_INFINITY) - (b.ready ?? Number.POSITIVE_INFINITY) || a.service.localeCompare(b.service))
    .map((r) => `  ${r.pod} on ${r.node}, Service ${r.service}: ready at ${at(r.ready)}, not ready at ${at(r.notReady)}, gone at ${at(r.gone)}`)
    .join('\n');
}

// ---- the pod's events ----

export type PodEvent = { reason: string; message: string; atMs: number; container: string | null };

type EventJson = {
  items: Array<{
    reason: string;
    message: string;
    involvedObject: { name: string; fieldPath?: string };
    eventTime?: string | null;
    lastTimestamp?: string | null;
    firstTimestamp?: string | null;
  }>;
};

export function podEvents(namespace: string, pod: string): PodEvent[] {
  const list = kubectlJson<EventJson>(['-n', namespace, 'get', 'events', '--field-selector', `involvedObject.name=${pod}`]);
  return list.items.map((e) => ({
    reason: e.reason,
    message: e.message,
    atMs: Date.parse(e.eventTime ?? e.lastTimestamp ?? e.firstTimestamp ?? ''),
    container: /spec\.(?:initC|c)ontainers\{([^}]+)\}/.exec(e.involvedObject.fieldPath ?? '')?.[1] ?? null,
  }));
}

/** The node names the kubelet logs exist for (for a test that reads every node). */
export function loggedNodes(): string[] {
  return existsSync(dirs.logs)
    ? readdirSync(dirs.logs)
        .filter((f) => f.startsWith('kubelet-'))
        .map((f) => f.slice(8, -4))
    : [];
}

// ---- a container's CPU, from its cgroup ----

export type CpuReading = { atMs: number; usageMs: number; throttledMs: number; throttledPeriods: number };

/** The cgroup v1 folders (cpu, cpuacct) of a container under its node's kubelet cgroup root. */
function containerCgroup(controller: 'cpu' | 'cpuacct', node: string, podUid: string, containerId: string): string | null {
  const n = NODES.find((x) => x.name === node);
  if (!n) return null;
  for (const qos of ['burstable', 'besteffort', '']) {
    const dir = join('/sys/fs/cgroup', controller, n.cgroupRoot, 'kubepods', qos, `pod${podUid}`, containerId);
    if (existsSync(dir)) return dir;
  }
  return null;
}

/** Reads a container's CPU time and CFS throttling now; null once its cgroup is gone. */
export function readCpu(node: string, podUid: string, containerId: string): CpuReading | null {
  const acct = containerCgroup('cpuacct', node, podUid, containerId);
  const cpu = containerCgroup('cpu', node, podUid, containerId);
  if (!acct || !cpu) return null;
  try {
    const usageNs = Number(readFileSync(join(acct, 'cpuacct.usage'), 'utf8').trim());
    const stat = Object.fromEntries(
      readFileSync(join(cpu, 'cpu.stat'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' ') as [string, string]),
    );
    return { atMs: Date.now(), usageMs: usageNs / 1e6, throttledMs: Number(stat.throttled_time ?? 0) / 1e6, throttledPeriods: Number(stat.nr_throttled ?? 0) };
  } catch {
    return null;
  }
}

/** Samples containers' CPU every `everyMs`; keeps each one's first and last reading. */
export class CpuWatch {
  private readonly first = new Map<string, CpuReading>();
  private readonly last = new Map<string, CpuReading>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly targets: () => Array<{ key: string; node: string; podUid: string; containerId: string }>,
    everyMs = 200,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
  }

  private sample(): void {
    for (const t of this.targets()) {
      const r = readCpu(t.node, t.podUid, t.containerId);
      if (!r) continue;
      if (!this.first.has(t.key)) this.first.set(t.key, r);
      this.last.set(t.key, r);
    }
  }

  /** CPU used and time throttled between the first and the last reading of `key`. */
  delta(key: string): { usageMs: number; throttledMs: number; throttledPeriods: number; overMs: number } | null {
    const a = this.first.get(key);
    const b = this.last.get(key);
    if (!a || !b) return null;
    return {
      usageMs: b.usageMs - a.usageMs,
      throttledMs: b.throttledMs - a.throttledMs,
      throttledPeriods: b.throttledPeriods - a.throttledPeriods,
      overMs: b.atMs - a.atMs,
    };
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }
}

/**
 * The witnesses of the start half of a rollout (issue 50), each read where the real component
 * leaves it:
 *   - the pods as the API server reports them (a watch): when each new pod appeared, got its IP and
 *     turned Ready;
 *   - each node's kube-proxy rules, read in the node's own network namespace: when the chain a
 *     NodePort of a Service jumps to on that node (KUBE-SVL-* with externalTrafficPolicy Local,
 *     KUBE-SVC-* with Cluster) first leads to a pod's address. kube-proxy (iptables mode, the
 *     nf_tables backend here) writes each sync as one transaction; `nft monitor` reports it as it
 *     lands, and `iptables-save -t nat` right after it says what the rules now are. The rule's time
 *     is the monitor's report of the change, not the save's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { JsonWatch } from './json-watch';
import { NODES, type NodeLayout } from './layout';
import { inNetns } from './sh';

// ---- the pods ----

export type PodSample = {
  atMs: number;
  pod: string;
  node: string;
  ip: string;
  ready: boolean;
  deleting: boolean;
};

type PodJson = {
  metadata?: { name?: string; deletionTimestamp?: string };
  spec?: { nodeName?: string };
  status?: { podIP?: string; conditions?: Array<{ type: string; status: string }> };
};

/** Every version of the pods a selector picks, with the time it arrived. */
export class PodWatch {
  readonly samples: PodSample[] = [];
  private readonly watch: JsonWatch<PodJson>;

  constructor(namespace: string, selector: string) {
    this.watch = new JsonWatch<PodJson>(['-n', namespace, 'get', 'pods', '-l', selector], (p, atMs) => {
      if (!p.metadata?.name) return;
      this.samples.push({
        atMs,
        pod: p.metadata.name,
        node: p.spec?.nodeName ?? '',
        ip: p.status?.podIP ?? '',
        ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
        deleting: p.metadata.deletionTimestamp !== undefined,
      });
    });
  }

  /** The first sample of `pod` that satisfies `test`, or undefined. */
  first(pod: string, test: (s: PodSample) => boolean = () => true): PodSample | undefined {
    return this.samples.find((s) => s.pod === pod && test(s));
  }

  stop(): void {
    this.watch.stop();
  }
}

// ---- kube-proxy's rules on each node ----

/** One endpoint a Service port's chain leads to on a node: `namespace/service:port -> address:targetPort`. */
export type RuleEndpoint = { service: string; port: string; address: string; policy: 'Local' | 'Cluster' };
export type RuleSample = { atMs: number; node: string; endpoints: RuleEndpoint[] };

/**
 * kube-proxy's endpoint rules in `iptables-save -t nat` output, e.g.
 * `-A KUBE-SVL-ABC -m comment --comment "ns/svc:http2 -> 10.244.2.7:80" -j KUBE-SEP-XYZ`: the chain a
 * Local NodePort jumps to (SVL) or a Cluster one (SVC), and each endpoint it leads to
 * (pkg/proxy/iptables/proxier.go, writeServiceToEndpointRules).
 */
export function parseEndpointRules(save: string, namespace: string): RuleEndpoint[] {
  const out: RuleEndpoint[] = [];
  const re = /^-A KUBE-SV([LC])-\S+ .*--comment "?([^/"\s]+)\/([^:"\s]+):(\S*) -> ([0-9a-f.:[\]]+):(\d+)"? .*-j KUBE-SEP-/;
  for (const line of save.split('\n')) {
    const m = re.exec(line);
    if (!m || m[2] !== namespace) continue;
    out.push({ service: m[3]!, port: m[4]!, address: m[5]!.replace(/^\[|\]$/g, ''), policy: m[1] === 'L' ? 'Local' : 'Cluster' });
  }
  return out;
}

/** `nft monitor rules` in one node's namespace, and a save of its nat table after each change it reports. */
class NodeRules {
  private readonly monitor: ChildProcess;
  private pendingSince: number | null = null;
  private saving = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Saves under way (each resolves when its sample is taken). */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly node: NodeLayout,
    private readonly namespace: string,
    private readonly onSample: (s: RuleSample) => void,
  ) {
    const [cmd, ...args] = inNetns(node.netns, 'nft', ['monitor', 'rules']);
    this.monitor = spawn(cmd!, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    this.monitor.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      // Only kube-proxy's table: kube-router's filter rules change on its own schedule.
      if (!/ ip nat /.test(chunk)) return;
      this.changed(Date.now());
    });
    this.changed(Date.now());
  }

  /** A change reported at `atMs`: one save shortly after (changes of one transaction arrive together). */
  private changed(atMs: number): void {
    this.pendingSince ??= atMs;
    if (this.saving || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.save();
    }, 20);
  }

  private save(): void {
    if (this.stopped || this.pendingSince === null) return;
    const atMs = this.pendingSince;
    this.pendingSince = null;
    this.saving = true;
    const [cmd, ...args] = inNetns(this.node.netns, 'iptables-save', ['-t', 'nat']);
    const child = spawn(cmd!, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      text += c;
    });
    const done = new Promise<void>((resolve) => {
      child.on('close', () => {
        this.onSample({ atMs, node: this.node.name, endpoints: parseEndpointRules(text, this.namespace) });
        this.saving = false;
        resolve();
        if (this.pendingSince !== null) this.changed(this.pendingSince);
      });
    });
    this.inFlight.add(done);
    void done.then(() => this.inFlight.delete(done));
  }

  async stop(): Promise<void> {
    this.monitor.kill('SIGTERM');
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // The last change reported before the stop is saved (a save under way finishes).
    if (this.pendingSince !== null && !this.saving) this.save();
    this.stopped = true;
    await Promise.all([...this.inFlight]);
  }
}

/** Every node's endpoint rules for one namespace's Services over time. */
export class RuleWatch {
  readonly samples: RuleSample[] = [];
  private readonly nodes: NodeRules[];

  constructor(namespace: string) {
    this.nodes = NODES.map((n) => new NodeRules(n, namespace, (s) => this.samples.push(s)));
  }

  /**
   * When `node`'s chain for `service` (any of its ports, or `port`) first led to `address` at or
   * after `fromMs`; undefined if it never did while watched.
   */
  firstLeads(node: string, service: string, address: string, fromMs: number, port?: string): number | undefined {
    return this.samples
      .filter((s) => s.node === node && s.atMs >= fromMs)
      .sort((a, b) => a.atMs - b.atMs)
      .find((s) => s.endpoints.some((e) => e.service === service && e.address === address && (port === undefined || e.port === port)))?.atMs;
  }

  /** Whether `node`'s chain for `service` led to `address` in the last sample taken at or before `atMs`. */
  leadsAt(node: string, service: string, address: string, atMs: number): boolean {
    const last = this.samples.filter((s) => s.node === node && s.atMs <= atMs).sort((a, b) => b.atMs - a.atMs)[0];
    return last?.endpoints.some((e) => e.service === service && e.address === address) ?? false;
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()));
  }
}

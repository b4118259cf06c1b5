/**
 * The witnesses of the start half of a rollout (issue 50), each read where the real component
 * leaves it:
 *   - the pods as the API server reports them (a watch): when each new pod appeared, got its IP and
 *     turned Ready;
 *   - each node's kube-proxy rules, read in the node's own network namespace: when the chain a
 *     NodePort of a Service jumps to on that node (KUBE-SVL-* with externalTrafficPolicy Local,
 *     KUBE-SVC-* with Cluster) first leads to a pod's address, and whether the node still drops
 *     the NodePort for want of a local endpoint. kube-proxy (iptables mode, the nf_tables backend
 *     here) writes each sync as one transaction; `nft monitor` reports it as it lands, and
 *     `iptables-save` right after it says what the rules now are (rule-watch-main.ts, a process of
 *     its own per node). The rule's time is the monitor's report of the change, not the save's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
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
/** A Service port whose NodePort the node drops (filter table: "has no local endpoints", externalTrafficPolicy Local). */
export type DroppedPort = { service: string; port: string };
/**
 * The node's rules after one reported change: `atMs` when `nft monitor` reported it, `savedAtMs`
 * when the save that read them ended (the rules are as they were at some moment between the two).
 */
export type RuleSample = { atMs: number; savedAtMs: number; node: string; endpoints: RuleEndpoint[]; dropped: DroppedPort[] };

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

/**
 * The NodePorts kube-proxy drops on a node, in `iptables-save` output of the filter table, e.g.
 * `-A KUBE-EXTERNAL-SERVICES -d 10.90.0.12/32 -p tcp -m comment --comment "ns/svc:http2 has no local
 * endpoints" -m addrtype --dst-type LOCAL -m tcp --dport 31234 -j DROP`: a Service with
 * externalTrafficPolicy Local, endpoints elsewhere, none on this node (pkg/proxy/iptables/proxier.go).
 */
export function parseDroppedPorts(save: string, namespace: string): DroppedPort[] {
  const out: DroppedPort[] = [];
  const re = /^-A KUBE-EXTERNAL-SERVICES .*--comment "?([^/"\s]+)\/([^:"\s]+):(\S*) has no local endpoints"? .*-j DROP/;
  for (const line of save.split('\n')) {
    const m = re.exec(line);
    if (m && m[1] === namespace) out.push({ service: m[2]!, port: m[3]! });
  }
  return out;
}

/** One node's rule-watch-main.js (in the node's namespace), its samples as they come. */
class NodeRules {
  private readonly child: ChildProcess;
  private buffer = '';
  private readonly exited: Promise<void>;

  constructor(node: NodeLayout, namespace: string, onSample: (s: RuleSample) => void) {
    const [cmd, ...args] = inNetns(node.netns, process.execPath, [join(__dirname, 'rule-watch-main.js'), namespace]);
    this.child = spawn(cmd!, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    this.exited = new Promise((resolve) => this.child.once('close', () => resolve()));
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        try {
          onSample({ ...(JSON.parse(line) as Omit<RuleSample, 'node'>), node: node.name });
        } catch {
          // not a sample
        }
      }
    });
  }

  /** Stops it; resolves once it has written its last sample (a change reported last is read first). */
  async stop(): Promise<void> {
    this.child.kill('SIGTERM');
    const bound = new Promise<void>((resolve) => setTimeout(resolve, 5000).unref());
    await Promise.race([this.exited, bound]);
    this.child.kill('SIGKILL');
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
   * The first sample at or after `fromMs` in which `node`'s NodePort chain for `service` led to
   * `address` and the node no longer dropped the Service's NodePorts; undefined if none did. `policy`: the Service's externalTrafficPolicy, whose
   * chain its NodePorts jump to (KUBE-SVL for Local; the KUBE-SVC chain of a Local Service serves
   * its ClusterIP, not its NodePorts).
   */
  firstLeads(node: string, service: string, address: string, fromMs: number, policy: RuleEndpoint['policy'] = 'Local'): RuleSample | undefined {
    return this.firstFrom(
      node,
      fromMs,
      (s) => s.endpoints.some((e) => e.service === service && e.address === address && e.policy === policy) && !s.dropped.some((d) => d.service === service),
    );
  }

  /** What `node`'s NodePort for `service` did at `atMs` (its last sample reported by then). */
  at(node: string, service: string, atMs: number, policy: RuleEndpoint['policy'] = 'Local'): NodePortState {
    return nodePortAt(this.samples, node, service, atMs, policy);
  }

  /** The first sample at or after `fromMs` in which `node` no longer drops `service`'s NodePorts and leads them to a pod. */
  firstServes(node: string, service: string, fromMs: number, policy: RuleEndpoint['policy'] = 'Local'): RuleSample | undefined {
    return this.firstFrom(node, fromMs, (s) => nodePortOf(s, service, policy).kind === 'leads');
  }

  /** `node`'s first sample at or after `fromMs`, in time order, that `test` accepts. */
  private firstFrom(node: string, fromMs: number, test: (s: RuleSample) => boolean): RuleSample | undefined {
    return this.samples
      .filter((s) => s.node === node && s.atMs >= fromMs)
      .sort((a, b) => a.atMs - b.atMs)
      .find(test);
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()));
  }
}

/**
 * A node's NodePort for a Service as one sample of its rules has it: dropped (no local endpoint:
 * a SYN to it is lost), leading to these pods' addresses, or unknown (no sample yet).
 */
export type NodePortState = { kind: 'dropped' } | { kind: 'leads'; addresses: string[] } | { kind: 'unknown' };

function nodePortOf(s: RuleSample, service: string, policy: RuleEndpoint['policy']): NodePortState {
  const addresses = [...new Set(s.endpoints.filter((e) => e.service === service && e.policy === policy).map((e) => e.address))];
  return addresses.length === 0 || s.dropped.some((d) => d.service === service) ? { kind: 'dropped' } : { kind: 'leads', addresses };
}

/**
 * What `node`'s NodePort for `service` did at `atMs`: as the last sample reported by then has it.
 * kube-proxy leads an externalTrafficPolicy Local NodePort to the node's ready pods, or, with none
 * ready, to its terminating pods that still serve (pkg/proxy/topology.go, CategorizeEndpoints): a
 * pod still leaving the node may take a new pod's traffic, and that traffic is not dropped.
 */
export function nodePortAt(
  samples: readonly RuleSample[],
  node: string,
  service: string,
  atMs: number,
  policy: RuleEndpoint['policy'] = 'Local',
): NodePortState {
  let last: RuleSample | undefined;
  for (const s of samples) if (s.node === node && s.atMs <= atMs && (!last || s.atMs >= last.atMs)) last = s;
  return last ? nodePortOf(last, service, policy) : { kind: 'unknown' };
}

import { hcConfigSchema, type HcConfig } from '../contract/hc-config';
import { HC_CONFIG_KEY, HC_CONFIG_VOLUME, HC_CONTAINER_NAME } from '../pod/names';
import { injectionOf, injectorRewritesProbes, meshDefaultConfig, probeRewriteOf, proxyDrainOf, type Injection, type ProxyDrain, type Setting } from './istio';
import type { LbView } from './lb-probe';
import { lbViewOf } from './lb-view';
import type { HcSidecar, LintOptions } from './lint-options';
import { at, listAt, objAt, selectorMatches, type LintObject, type Obj } from './objects';
import { podViewOf, type ContainerView, type PodView } from './pod-view';
import { isObject, type Path } from '../core/json';

/** Kinds whose Pods, read back from the API server beside them, are theirs. */
const OWNING_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet']);

/** The proxy container Istio's gateway charts render (docs/facts.md §5). */
export const DEFAULT_PROXY_CONTAINER = 'istio-proxy';

export type { HcSidecar, LintOptions };

/**
 * Everything a rule reads: the objects, the pods they carry, and the relations between them
 * (which Services, budgets, autoscalers and policies select a pod). Built once per lint; the
 * relations are indexed and each pod's answers kept, since every rule asks the same questions.
 */
export class LintContext {
  readonly pods: PodView[];
  readonly proxyContainer: string;
  private readonly mesh: ReturnType<typeof meshDefaultConfig>;
  private readonly injectorRewrite: Setting<boolean>;
  /** Per-pod answers, computed once: every rule asks the same questions. */
  private readonly memo = new Map<string, Map<PodView, unknown>>();
  /** Indexes, built on first use. */
  private readonly kinds = new Map<string, LintObject[]>();
  /** The input's order, in which related objects are listed. */
  private readonly position = new Map<LintObject, number>();
  private readonly selectorIndex = new Map<string, { byPair: Map<string, LintObject[]>; rest: LintObject[] }>();
  private autoscalers: Map<string, LintObject[]> | undefined;
  private configMaps: Map<string, LintObject[]> | undefined;
  private gatewayList: PodView[] | undefined;

  constructor(
    readonly objects: readonly LintObject[],
    readonly options: LintOptions = {},
  ) {
    // A live Pod of a workload of the input is that workload's pod: the rules read the workload's
    // template once (plan-mismatch compares the Pods with the plan too).
    const workloads = objects.filter((o) => OWNING_KINDS.has(o.kind));
    const owned = (o: LintObject) =>
      o.kind === 'Pod' &&
      listAt(o.value, ['metadata', 'ownerReferences']).length > 0 &&
      workloads.some((w) => w.namespace === o.namespace && selectorMatches(at(w.value, ['spec', 'selector']), o.labels));
    this.pods = objects.flatMap((o) => {
      const pod = owned(o) ? undefined : podViewOf(o);
      return pod ? [pod] : [];
    });
    this.proxyContainer = options.proxyContainer ?? options.plan?.plan.proxy.containerName ?? DEFAULT_PROXY_CONTAINER;
    objects.forEach((o, i) => this.position.set(o, i));
    this.mesh = meshDefaultConfig(this.ofKind('ConfigMap'));
    this.injectorRewrite = injectorRewritesProbes(this.ofKind('ConfigMap'));
  }

  private once<T>(what: string, pod: PodView, compute: () => T): T {
    let m = this.memo.get(what);
    if (!m) this.memo.set(what, (m = new Map()));
    if (!m.has(pod)) m.set(pod, compute());
    return m.get(pod) as T;
  }

  get plan(): LintOptions['plan'] {
    return this.options.plan;
  }

  get lb(): LintOptions['lb'] {
    return this.options.lb;
  }

  get nodes(): LintOptions['nodes'] {
    return this.options.nodes;
  }

  ofKind(kind: string): LintObject[] {
    let list = this.kinds.get(kind);
    if (!list) this.kinds.set(kind, (list = this.objects.filter((o) => o.kind === kind)));
    return list;
  }

  /** The pod's proxy container, where it has one: what makes a pod a gateway to lint. */
  proxyOf(pod: PodView): ContainerView | undefined {
    return pod.containers.find((c) => c.name === this.proxyContainer);
  }

  /** Pods with a proxy container: the gateways. */
  get gateways(): PodView[] {
    return (this.gatewayList ??= this.pods.filter((p) => this.proxyOf(p) !== undefined));
  }

  /** The LB's view of the pod: the port and path it probes and through what (src/lint/lb-view.ts). */
  lbView(pod: PodView): LbView {
    return this.once('lb-view', pod, () => lbViewOf(this, pod));
  }

  /** Whether Istio's injector runs on the pod. */
  injection(pod: PodView): Injection {
    return this.once('injection', pod, () => injectionOf(pod, this.proxyOf(pod), this.ofKind('Namespace')));
  }

  /** Whether the injector, where it runs, rewrites the pod's app probes to pilot-agent, and to which port. */
  probeRewrite(pod: PodView): ReturnType<typeof probeRewriteOf> {
    return this.once('probe-rewrite', pod, () => probeRewriteOf(pod, this.injectorRewrite));
  }

  proxyDrain(pod: PodView): ProxyDrain {
    return this.once('drain', pod, () => proxyDrainOf(pod, this.proxyOf(pod), this.mesh));
  }

  /**
   * The objects of a kind whose selector picks the pod. Selectors are indexed by one of their
   * matchLabels pairs, so a pod is checked only against the selectors that share a label with it
   * (10,000 objects in one namespace would otherwise cost pods x selectors matches).
   */
  private selecting(kind: string, selectorPath: Path, pod: PodView, options: { plain?: boolean; emptyMatchesAll?: boolean }): LintObject[] {
    let idx = this.selectorIndex.get(kind);
    if (!idx) {
      idx = { byPair: new Map(), rest: [] };
      for (const o of this.ofKind(kind)) {
        const sel = at(o.value, selectorPath);
        const labels = options.plain ? sel : at(sel, ['matchLabels']);
        const first = isObject(labels) ? Object.entries(labels)[0] : undefined;
        if (first) {
          const key = `${first[0]}=${String(first[1])}`;
          const list = idx.byPair.get(key);
          if (list) list.push(o);
          else idx.byPair.set(key, [o]);
        } else {
          idx.rest.push(o);
        }
      }
      this.selectorIndex.set(kind, idx);
    }
    const candidates = new Set<LintObject>(idx.rest);
    for (const [k, v] of Object.entries(pod.labels)) for (const o of idx.byPair.get(`${k}=${String(v)}`) ?? []) candidates.add(o);
    return [...candidates]
      .filter((o) => o.sameNamespace(pod.owner) && selectorMatches(at(o.value, selectorPath) ?? {}, pod.labels, options))
      .sort((a, b) => this.position.get(a)! - this.position.get(b)!);
  }

  /** Services whose selector picks the pod. */
  servicesOf(pod: PodView): LintObject[] {
    return this.once('services', pod, () => this.selecting('Service', ['spec', 'selector'], pod, { plain: true }));
  }

  /** PodDisruptionBudgets whose selector picks the pod (an empty selector picks every pod: policy/v1). */
  budgetsOf(pod: PodView): LintObject[] {
    return this.once('budgets', pod, () => this.selecting('PodDisruptionBudget', ['spec', 'selector'], pod, { emptyMatchesAll: true }));
  }

  /** The HorizontalPodAutoscaler scaling the pod's owner, if any. */
  autoscalerOf(pod: PodView): LintObject | undefined {
    if (!this.autoscalers) {
      this.autoscalers = new Map();
      for (const h of this.ofKind('HorizontalPodAutoscaler')) {
        const ref = objAt(h.value, ['spec', 'scaleTargetRef']);
        const key = `${String(ref.kind)}/${String(ref.name)}`;
        this.autoscalers.set(key, [...(this.autoscalers.get(key) ?? []), h]);
      }
    }
    return this.autoscalers.get(`${pod.owner.kind}/${pod.owner.name}`)?.find((h) => h.sameNamespace(pod.owner));
  }

  networkPoliciesOf(pod: PodView): LintObject[] {
    return this.once('policies', pod, () => this.selecting('NetworkPolicy', ['spec', 'podSelector'], pod, { emptyMatchesAll: true }));
  }

  configMap(namespaceOf: LintObject, name: string): LintObject | undefined {
    if (!this.configMaps) {
      this.configMaps = new Map();
      for (const c of this.ofKind('ConfigMap'))
        this.configMaps.set(`${c.namespace ?? ''}/${c.name}`, [...(this.configMaps.get(`${c.namespace ?? ''}/${c.name}`) ?? []), c]);
    }
    const here = this.configMaps.get(`${namespaceOf.namespace ?? ''}/${name}`) ?? this.configMaps.get(`/${name}`);
    return here?.[0] ?? (namespaceOf.namespace === undefined ? this.ofKind('ConfigMap').find((c) => c.name === name) : undefined);
  }

  /** The gracegate sidecar of a pod (container gracegate-hc, or one running `gracegate hc`). */
  hcSidecar(pod: PodView): HcSidecar | undefined {
    return this.once('sidecar', pod, () => this.findSidecar(pod));
  }

  private findSidecar(pod: PodView): HcSidecar | undefined {
    const container = pod.containers.find(
      (c) =>
        c.name === HC_CONTAINER_NAME || (/(^|\/)gracegate$/.test(String(listAt(c.value, ['command'])[0] ?? '')) && listAt(c.value, ['command'])[1] === 'hc'),
    );
    if (!container) return undefined;
    const volume = listAt(pod.spec, ['volumes']).find((v) => isObject(v) && v.name === HC_CONFIG_VOLUME);
    const configMapName = isObject(volume) && typeof objAt(volume, ['configMap']).name === 'string' ? (objAt(volume, ['configMap']).name as string) : undefined;
    const configMap = configMapName ? this.configMap(pod.owner, configMapName) : undefined;
    let config: HcConfig | undefined;
    let configJson: unknown;
    const raw = configMap ? objAt(configMap.value, ['data'])[HC_CONFIG_KEY] : undefined;
    if (typeof raw === 'string') {
      try {
        configJson = JSON.parse(raw);
        const parsed = hcConfigSchema.safeParse(configJson);
        if (parsed.success) config = parsed.data;
      } catch {
        // Not JSON: the sidecar refuses it at start-up; the config reads as absent here.
      }
    }
    return { container, configMapName, configMap, config, configJson };
  }
}

export type { Obj };

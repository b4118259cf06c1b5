import { hcConfigSchema, type HcConfig } from '../hc/config';
import type { LbBehaviour } from '../plan/lb-behaviour';
import type { Plan } from '../plan/plan-gateway';
import { HC_CONFIG_KEY, HC_CONFIG_VOLUME, HC_CONTAINER_NAME } from '../pod/names';
import type { PodChanges } from '../pod/pod-changes';
import { meshDefaultConfig, proxyDrainOf, type ProxyDrain } from './istio';
import { at, isObj, listAt, objAt, selectorMatches, type LintObject, type Obj } from './objects';
import { podViewOf, type ContainerView, type PodView } from './pod';

/** The proxy container Istio's gateway charts render (docs/facts.md §5). */
export const DEFAULT_PROXY_CONTAINER = 'istio-proxy';

/** What lint knows beyond the manifests: the plan (`--spec`), or the LB alone (`--lb`), and the node count. */
export type LintOptions = {
  /** The plan the manifests should carry, and its pod changes. */
  plan?: { plan: Plan; changes: PodChanges; source: string };
  /** The LB in front of the gateways (from the plan, or `--lb`). */
  lb?: { behaviour: LbBehaviour; source: string };
  /** Nodes the gateway pods may run on (`spec.nodes`, or `--nodes`). */
  nodes?: { value: number; source: string };
  /** The proxy container's name. @default istio-proxy (or the plan's spec.envoy.containerName) */
  proxyContainer?: string;
};

/** The gracegate sidecar of a pod and the config it reads, when the input has that ConfigMap. */
export type HcSidecar = {
  container: ContainerView;
  configMapName: string | undefined;
  configMap: LintObject | undefined;
  /** The config the sidecar will run with (defaults applied); undefined when absent or refused. */
  config: HcConfig | undefined;
};

/**
 * Everything a rule reads: the objects, the pods they carry, and the relations between them
 * (which Services, budgets, autoscalers and policies select a pod). Built once per lint.
 */
export class LintContext {
  readonly pods: PodView[];
  readonly proxyContainer: string;
  private readonly drains = new Map<PodView, ProxyDrain>();
  private readonly mesh: ReturnType<typeof meshDefaultConfig>;

  constructor(readonly objects: readonly LintObject[], readonly options: LintOptions = {}) {
    this.pods = objects.flatMap((o) => {
      const pod = podViewOf(o);
      return pod ? [pod] : [];
    });
    this.proxyContainer = options.proxyContainer ?? options.plan?.plan.proxy.containerName ?? DEFAULT_PROXY_CONTAINER;
    this.mesh = meshDefaultConfig(objects);
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
    return this.objects.filter((o) => o.kind === kind);
  }

  /** The pod's proxy container, where it has one: what makes a pod a gateway to lint. */
  proxyOf(pod: PodView): ContainerView | undefined {
    return pod.containers.find((c) => c.name === this.proxyContainer);
  }

  /** Pods with a proxy container: the gateways. */
  get gateways(): PodView[] {
    return this.pods.filter((p) => this.proxyOf(p) !== undefined);
  }

  proxyDrain(pod: PodView): ProxyDrain {
    let d = this.drains.get(pod);
    if (!d) {
      d = proxyDrainOf(pod, this.proxyOf(pod), this.mesh);
      this.drains.set(pod, d);
    }
    return d;
  }

  /** Services whose selector picks the pod. */
  servicesOf(pod: PodView): LintObject[] {
    return this.ofKind('Service').filter((s) => s.sameNamespace(pod.owner) && selectorMatches(at(s.value, ['spec', 'selector']), pod.labels, { plain: true }));
  }

  /** PodDisruptionBudgets whose selector picks the pod (an empty selector picks every pod: policy/v1). */
  budgetsOf(pod: PodView): LintObject[] {
    return this.ofKind('PodDisruptionBudget').filter((b) => b.sameNamespace(pod.owner) && selectorMatches(at(b.value, ['spec', 'selector']) ?? {}, pod.labels, { emptyMatchesAll: true }));
  }

  /** The HorizontalPodAutoscaler scaling the pod's owner, if any. */
  autoscalerOf(pod: PodView): LintObject | undefined {
    return this.ofKind('HorizontalPodAutoscaler').find((h) => {
      const ref = objAt(h.value, ['spec', 'scaleTargetRef']);
      return h.sameNamespace(pod.owner) && ref.kind === pod.owner.kind && ref.name === pod.owner.name;
    });
  }

  networkPoliciesOf(pod: PodView): LintObject[] {
    return this.ofKind('NetworkPolicy').filter((n) => n.sameNamespace(pod.owner) && selectorMatches(at(n.value, ['spec', 'podSelector']) ?? {}, pod.labels, { emptyMatchesAll: true }));
  }

  configMap(namespaceOf: LintObject, name: string): LintObject | undefined {
    return this.ofKind('ConfigMap').find((c) => c.name === name && c.sameNamespace(namespaceOf));
  }

  /** The gracegate sidecar of a pod (container gracegate-hc, or one running `gracegate hc`). */
  hcSidecar(pod: PodView): HcSidecar | undefined {
    const container = pod.containers.find((c) => c.name === HC_CONTAINER_NAME || /(^|\/)gracegate$/.test(String(listAt(c.value, ['command'])[0] ?? '')) && listAt(c.value, ['command'])[1] === 'hc');
    if (!container) return undefined;
    const volume = listAt(pod.spec, ['volumes']).find((v) => isObj(v) && v.name === HC_CONFIG_VOLUME);
    const configMapName = isObj(volume) && typeof objAt(volume, ['configMap']).name === 'string' ? objAt(volume, ['configMap']).name as string : undefined;
    const configMap = configMapName ? this.configMap(pod.owner, configMapName) : undefined;
    let config: HcConfig | undefined;
    const raw = configMap ? objAt(configMap.value, ['data'])[HC_CONFIG_KEY] : undefined;
    if (typeof raw === 'string') {
      try {
        const parsed = hcConfigSchema.safeParse(JSON.parse(raw));
        if (parsed.success) config = parsed.data;
      } catch {
        // Not JSON: the sidecar refuses it at start-up; the config reads as absent here.
      }
    }
    return { container, configMapName, configMap, config };
  }
}

export type { Obj };

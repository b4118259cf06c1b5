/**
 * The live objects of a delivered gateway held to the plan's pod changes, field by field: what the
 * API server stored after validation, defaulting and admission (istiod's injection webhook
 * included). Every field the pod changes set must be on the live object with the same value; what
 * the server or the injector added beside them (defaults, the injected proxy's own fields) is
 * allowed. A field dropped, rewritten or refused is named by its path in the list of differences.
 */
import { networkPolicyObject } from '../../../../src/pod/extra-objects';
import type { PodChanges } from '../../../../src/pod/pod-changes';
import type { WorkloadChanges } from '../../../../src/pod/workload/pod-changes';
import { kubectlJson } from '../kubectl';

type Json = unknown;
type Obj = Record<string, unknown>;

export type FieldDifference = { path: string; expected: Json; live: Json };

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const named = (v: unknown): v is Obj & { name: string } => isObj(v) && typeof v.name === 'string';

/**
 * Where `live` does not carry `expected`: objects compared key by key (extra live keys allowed),
 * lists of named entries matched by name (extra live entries allowed), other lists and scalars
 * compared whole.
 */
export function differences(expected: Json, live: Json, path: string): FieldDifference[] {
  if (isObj(expected)) {
    if (!isObj(live)) return [{ path, expected, live: live ?? null }];
    return Object.entries(expected).flatMap(([k, v]) => differences(v, live[k], `${path}.${k}`));
  }
  if (Array.isArray(expected) && expected.length > 0 && expected.every(named)) {
    if (!Array.isArray(live)) return [{ path, expected, live: live ?? null }];
    return expected.flatMap((e) => {
      const match = live.find((l) => named(l) && l.name === e.name);
      return match === undefined ? [{ path: `${path}[${e.name}]`, expected: e, live: null }] : differences(e, match, `${path}[${e.name}]`);
    });
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(live) || live.length !== expected.length) return [{ path, expected, live: live ?? null }];
    return expected.flatMap((e, i) => differences(e, live[i], `${path}[${i}]`));
  }
  return expected === live ? [] : [{ path, expected, live: live ?? null }];
}

export type LivePodObject = {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Obj & { containers: Obj[]; initContainers?: Obj[] };
};

/** What the pod changes require of one gateway pod, as a partial Pod (the paths compared). */
export function expectedPod(changes: PodChanges): Obj {
  const spec: Obj = {
    [changes.hcPlacement]: [changes.hcContainer],
    containers: [
      ...(changes.hcPlacement === 'containers' ? [changes.hcContainer] : []),
      { name: changes.proxy.containerName, lifecycle: changes.proxy.lifecycle },
    ],
    volumes: changes.volumes,
    terminationGracePeriodSeconds: changes.terminationGracePeriodSeconds,
    ...(changes.affinity ? { affinity: changes.affinity } : {}),
    ...(changes.imagePullSecrets.length > 0 ? { imagePullSecrets: changes.imagePullSecrets } : {}),
  };
  return { metadata: { labels: changes.selectorLabels, annotations: changes.podAnnotations }, spec };
}

/** The live pod against the pod changes; also the fields the pod changes leave unset and must stay so. */
export function podDifferences(changes: PodChanges, pod: LivePodObject): FieldDifference[] {
  return differences(expectedPod(changes), pod, `Pod/${pod.metadata.name}`);
}

/** How many of the pod changes' leaf fields a comparison looked at (to report; a zero would mean nothing was compared). */
export function leafCount(v: Json): number {
  if (isObj(v)) return Object.values(v).reduce<number>((n, x) => n + leafCount(x), 0);
  if (Array.isArray(v)) return v.length === 0 ? 1 : v.reduce<number>((n, x) => n + leafCount(x), 0);
  return 1;
}

/** The objects around the pods: Deployment, HPA, PDB, health Service, gateway Service, hc ConfigMap. */
export function neighbourDifferences(
  changes: PodChanges,
  o: { namespace: string; deployment: string; gatewayService: string; hpa?: string; pdb?: string },
): { differences: FieldDifference[]; compared: number } {
  const ns = o.namespace;
  const out: FieldDifference[] = [];
  let compared = 0;
  const check = (expected: Obj, live: unknown, path: string): void => {
    compared += leafCount(expected);
    out.push(...differences(expected, live, path));
  };
  const deploy = kubectlJson<Obj>(['-n', ns, 'get', 'deployment', o.deployment]);
  check(
    {
      spec: {
        strategy: changes.strategy,
        minReadySeconds: changes.minReadySeconds,
        ...(changes.replicas !== null ? { replicas: changes.replicas } : {}),
      },
    },
    deploy,
    `Deployment/${o.deployment}`,
  );
  if (changes.autoscaler) {
    const name = o.hpa ?? o.deployment;
    const hpa = kubectlJson<Obj>(['-n', ns, 'get', 'horizontalpodautoscaler.v2.autoscaling', name]);
    const a = changes.autoscaler;
    check(
      {
        spec: {
          minReplicas: a.minReplicas,
          maxReplicas: a.maxReplicas,
          scaleTargetRef: { kind: 'Deployment', name: o.deployment },
          ...(a.behavior ? { behavior: a.behavior } : {}),
        },
      },
      hpa,
      `HorizontalPodAutoscaler/${name}`,
    );
  }
  if (changes.disruptionBudget) {
    const name = o.pdb ?? changes.disruptionBudget.name;
    const pdb = kubectlJson<Obj>(['-n', ns, 'get', 'poddisruptionbudget', name]);
    check(
      { spec: { maxUnavailable: changes.disruptionBudget.maxUnavailable, selector: { matchLabels: changes.selectorLabels } } },
      pdb,
      `PodDisruptionBudget/${name}`,
    );
  }
  if (changes.healthService) {
    const h = changes.healthService;
    const svc = kubectlJson<Obj>(['-n', ns, 'get', 'service', h.name]);
    check(
      {
        spec: {
          type: h.type,
          selector: changes.selectorLabels,
          ports: [{ port: h.port, ...(h.nodePort !== undefined ? { nodePort: h.nodePort } : {}) }],
          ...(h.externalTrafficPolicy ? { externalTrafficPolicy: h.externalTrafficPolicy } : {}),
        },
      },
      svc,
      `Service/${h.name}`,
    );
  }
  if (changes.gatewayServiceTrafficPolicy || changes.gatewayServiceHealthPort) {
    // The traffic policy, and the sidecar's health port where the plan puts it on this Service.
    const svc = kubectlJson<Obj>(['-n', ns, 'get', 'service', o.gatewayService]);
    const port = changes.gatewayServiceHealthPort;
    check(
      {
        spec: {
          ...(changes.gatewayServiceTrafficPolicy ? { externalTrafficPolicy: changes.gatewayServiceTrafficPolicy } : {}),
          ...(port ? { ports: [{ ...port }] } : {}),
        },
      },
      svc,
      `Service/${o.gatewayService}`,
    );
  }
  const policy = networkPolicyObject(changes);
  if (policy) {
    // Every path carries the NetworkPolicy over the sidecar's ports, as podChanges(plan) builds it.
    const live = kubectlJson<Obj>(['-n', ns, 'get', 'networkpolicy', policy.metadata.name]);
    check({ spec: policy.spec as Obj }, live, `NetworkPolicy/${policy.metadata.name}`);
  }
  const cm = kubectlJson<{ data?: Record<string, string> }>(['-n', ns, 'get', 'configmap', changes.hcConfigMapName]);
  const key = Object.keys(cm.data ?? {}).find((k) => k.endsWith('.json'));
  compared += leafCount(changes.hcConfig);
  out.push(...differences(changes.hcConfig, key ? JSON.parse(cm.data![key]!) : null, `ConfigMap/${changes.hcConfigMapName}.data`));
  return { differences: out, compared };
}

/** What the workload changes require of one application pod. */
export function expectedWorkloadPod(changes: WorkloadChanges, containerName: string): Obj {
  const container: Obj = { name: containerName, ...(changes.env.length > 0 ? { env: changes.env } : {}) };
  if (changes.preStop) container.lifecycle = { preStop: changes.preStop };
  return {
    metadata: { labels: changes.selectorLabels },
    spec: {
      containers: [container],
      terminationGracePeriodSeconds: changes.terminationGracePeriodSeconds,
      ...(changes.affinity ? { affinity: changes.affinity } : {}),
    },
  };
}

import { createHash } from 'node:crypto';
import { Duration } from '../core/duration';
import type { HcConfigInput } from '../contract/hc-config';
import type { HcSidecarKind } from '../plan/hc-sidecar';
import type { Derived } from '../model/derived';
import type { Plan } from '../plan/plan-gateway';
import { DEFAULT_GATEWAY_CLASS } from '../schema/chart';
import type { HealthSpec } from '../schema/gateway-spec';
import { checkHcConfig, hcConfigFor } from './hc-config';
import type { Affinity, Container, DeploymentStrategy, HpaBehavior, HttpGetAction, PodAffinityTerm, Volume } from './k8s';
import { hostnameAntiAffinity } from './k8s-shapes';
import {
  ANNOTATIONS,
  HC_CONFIG_DIR,
  HC_CONFIG_PATH,
  HC_CONFIG_VOLUME,
  HC_CONTAINER_NAME,
  HC_HEALTH_PORT_NAME,
  HC_METRICS_PORT_NAME,
  GATEWAY_API_NAME_LABEL,
  HC_STATE_DIR,
  HC_STATE_VOLUME,
  MAX_GATEWAY_NAME_LENGTH,
  PATHS,
  objectNames,
  podSelectorLabels,
} from './names';
import { lbNamespaceLabels, lbServiceAnnotations } from '../lb-config';
import { GracegateError } from '../core/errors';
import { HOST_IPS_ENV } from '../contract/addresses';
import { COUNTING_STATS_SUFFIXES, LOSS_STATS_SUFFIXES, UPGRADES_STATS_SUFFIX } from '../contract/envoy-stat-names';

/** The image's tag follows the package version, so a CLI and its sidecar always match. */
export const DEFAULT_IMAGE = `ghcr.io/gracegate/gracegate:${(require('../../../package.json') as { version: string }).version}`;

/** Non-root uid/gid of the sidecar (the distroless "nonroot" user). */
export const HC_RUN_AS = 65532;

/**
 * The sidecar's resources, chosen rather than left to cdk8s-plus (1000m/512Mi) or to a
 * LimitRange (whose default CPU limit still fills the one left out, below). Memory, measured on the
 * test cluster (docs/cluster.md): the hc container peaks well below 64Mi, and its preStop is an
 * httpGet (no second process), so 64Mi is requested and 160Mi leaves room for heap growth under
 * probe load: an OOM kill during the sequence would cut the sequence short.
 *
 * CPU: a request of 100m and no limit. The request is the container's cgroup `cpu.shares` (102), all
 * it is given when the node's CPU is contended, and the LB's probe must be answered within the LB's
 * check timeout then too. 10m (10 shares) was below the hc's own idle use (14 ms a second on the
 * cluster), and on the test cluster a pod that was not leaving went DOWN with "Layer7 timeout"
 * under CPU contention. Measured beside a neighbour burning every core (docs/manifests.md, "The
 * sidecar's CPU"; bench/hc-cpu-share-bench.ts): 10m failed 27 of 1500 probes at HAProxy's 300 ms
 * check timeout (p99 284 ms), 50m none but with a p99 of 75 ms and probes up to 237 ms, 100m with
 * no limit none, its slowest probe 115 ms. A limit is a CFS quota per 100 ms period: 200m throttled
 * every start-up and nearly every period of a probe storm (the hc held at 200 ms of CPU a second,
 * under half what it used unlimited), and in the earlier run kept in
 * docs/bench/hc-cpu-share-results.json one contended run's slowest probe, throttled, came 3 ms
 * before the timeout; 500m still throttled at start-ups and in a storm on an idle node. No limit costs nothing the probes measured: Node runs
 * the hc's JavaScript on one thread (0.7 of a core at 40,000 requests a second), and under
 * contention the request's shares, not a quota, divide the CPU. A namespace whose ResourceQuota
 * counts limits.cpu, or whose LimitRange gives a smaller default, needs one added: at least 500m,
 * never throttled beside the neighbour (docs/manifests.md).
 */
export const HC_RESOURCES = {
  requests: { cpu: '100m', memory: '64Mi' },
  limits: { memory: '160Mi' },
} as const;

/**
 * The state emptyDir only ever holds one small JSON file (plus its temp copy during an atomic
 * write); a size limit keeps a bug from filling the node's disk.
 */
export const HC_STATE_SIZE_LIMIT = '1Mi';

/** Options that are not in the spec because they are about delivery, not about the gateway. */
export type PodChangesOptions = {
  /** The gracegate image running the sidecar. @default ghcr.io/gracegate/gracegate:<package version> */
  image?: string;
};

/** The health Service, when the exposure needs one (nodePort or clusterIP; hostPort needs none). */
export type HealthServiceData = {
  name: string;
  type: 'NodePort' | 'ClusterIP';
  port: number;
  /** The fixed NodePort from the spec; absent: Kubernetes allocates one. */
  nodePort?: number;
  /** `Local` for NodePort (docs/facts.md §6): a node's probe must be answered by that node's pod. */
  externalTrafficPolicy?: 'Local';
};

/**
 * A port for the gateway's own Service: the sidecar's health port (targetPort by number: istio/gateway's
 * values schema takes no name there), on the spec's NodePort if it names one.
 */
export type GatewayServicePortData = { name: string; protocol: 'TCP'; port: number; targetPort: number; nodePort?: number };

/**
 * The gateway's HorizontalPodAutoscaler as the plan needs it: its range, and what the spec says of
 * its target and behaviour. Every path keeps the HPA that deploys with the gateway (the chart's,
 * istiod's) and gives it these values; none sets `replicas` on the Deployment it scales.
 */
export type AutoscalerData = {
  minReplicas: number;
  maxReplicas: number;
  /** Absent: the chart's own target (istio/gateway 80), or Kubernetes' 80. */
  targetCPUUtilizationPercentage?: number;
  /** Absent: the behaviour the HPA already has (Kubernetes' defaults unless the chart's values set one). */
  behavior?: HpaBehavior;
};

/**
 * A gateway istiod deploys for a Kubernetes Gateway (spec.chart.kind gateway-api): where the pod
 * changes go (the parameters ConfigMap istiod's deployment controller applies) and what istiod names.
 */
export type GatewayApiData = {
  /** The Gateway's `gatewayClassName`. */
  className: string;
  /** The Deployment istiod creates: `<gateway>-<class>` (deploymentcontroller.go getDefaultName). */
  deploymentName: string;
  /** The ConfigMap gracegate writes; the Gateway names it in `spec.infrastructure.parametersRef`. */
  parametersName: string;
  /** Where that ConfigMap lives: the Gateway's namespace, or istiod's for class defaults. */
  parametersNamespace: string;
  /** Class-wide: the ConfigMap is the class defaults, and these Gateways get health Services. */
  classDefaults: { gateways: Array<{ name: string; namespace: string }> } | null;
};

/**
 * Everything the plan requires of the gateway pod and its neighbours, decided once. The
 * constructs, the values overlays and the post-renderer are projections of this object: none of
 * them decides a field on its own. Pure data (JSON-serialisable), no cdk8s.
 */
export type PodChanges = {
  gateway: { name: string; namespace: string };
  /** Labels of the gateway pods (the chart's selector labels). */
  selectorLabels: Record<string, string>;
  /** The fixed replica count; null when an HPA owns it (then `autoscaler` says its range). */
  replicas: number | null;
  /** The HPA the gateway keeps; null with a fixed count. */
  autoscaler: AutoscalerData | null;
  /** For a Gateway API gateway (istiod deploys it); null when a chart renders the gateway. */
  gatewayApi: GatewayApiData | null;
  /** The hc sidecar, a complete container. */
  hcContainer: Container;
  /**
   * The pod list the hc sidecar goes into: `initContainers` for a native sidecar (it then carries
   * `restartPolicy: Always` and a startup probe), `containers` for an ordinary one (plan.hcSidecar).
   */
  hcPlacement: 'initContainers' | 'containers';
  /** The pod's imagePullSecrets (merged by name into the chart's own); empty: none added. */
  imagePullSecrets: Array<{ name: string }>;
  /**
   * The istio-proxy hold: merged into the proxy container. Its preStop blocks on the sidecar's
   * /wait-closed until the sequence has ended, so Envoy gets SIGTERM only after in-flight is 0 and
   * the LB has moved on; its arrival is also the sidecar's termination witness.
   */
  proxy: { containerName: string; lifecycle: { preStop: { httpGet: HttpGetAction } } };
  /** Volumes the sidecar mounts: the hc config ConfigMap and the state emptyDir. */
  volumes: Volume[];
  terminationGracePeriodSeconds: number;
  strategy: DeploymentStrategy;
  /**
   * Deployment minReadySeconds: the LB's time to take a new pod back in, so a rollout drains the
   * next old pod only once the LB sends the new one traffic (else drain-first has nowhere to
   * redispatch with two replicas).
   */
  minReadySeconds: number;
  /** Pod anti-affinity on kubernetes.io/hostname; null when the plan says none. */
  affinity: Affinity | null;
  podAnnotations: Record<string, string>;
  /**
   * The Envoy stats suffixes the sidecar reads (in proxy.istio.io/config's proxyStatsMatcher); also
   * appended to a pod's own sidecar.istio.io/statsInclusionSuffixes, which Istio would use instead.
   */
  statsInclusionSuffixes: string[];
  /** What the sidecar reads from /etc/gracegate/hc.json (validated by src/contract/hc-config.ts's schema). */
  hcConfig: HcConfigInput;
  hcConfigMapName: string;
  /** The sidecar's health Service; null with a hostPort, or where the health port goes on the gateway's own Service. */
  healthService: HealthServiceData | null;
  /**
   * The port the gateway's own Service gains for the LB's probe (plan.healthProbe via
   * gateway-service): one slice and one sync with the traffic, so a new pod's probe passes only
   * through the rules its traffic takes (docs/hc.md, "The start hold"). null: the Service keeps its ports.
   */
  gatewayServiceHealthPort: GatewayServicePortData | null;
  /** The NetworkPolicy over the sidecar's ports; null with spec.networkPolicy.enabled false. */
  networkPolicy: NetworkPolicyData | null;
  /** The PDB's maxUnavailable; null: no PDB (one replica, where a PDB would block node drains). */
  disruptionBudget: { name: string; maxUnavailable: number } | null;
  /** Annotations for the gateway's own LoadBalancer Service (the AWS LB Controller for model nlb). */
  gatewayServiceAnnotations: Record<string, string>;
  /**
   * The gateway's own Service's externalTrafficPolicy: `Local` where the LB addresses nodes (health
   * exposure nodePort or hostPort; not a cloud LB, whose target type decides), so that the traffic the LB
   * sends to a node reaches that node's pod only, the pod whose health the LB's probe of that node
   * answers. With `Cluster`, kube-proxy spreads each node's traffic over every gateway pod: a pod the
   * LB has taken out keeps getting requests through the other nodes, and the LB's flush of one node
   * cuts requests other pods serve (measured on the test cluster, docs/cluster.md). null: left as it is.
   */
  gatewayServiceTrafficPolicy: 'Local' | null;
  /**
   * Labels the gateway's namespace must carry (the AWS LB Controller's pod readiness gate for NLB ip
   * targets). No chart or Helm release owns the namespace, so only synth's manifests.yaml applies
   * them; the other paths print them.
   */
  namespaceLabels: Record<string, string>;
  /**
   * Envoy's stream and connection lifetime limits the long-lived plan derives
   * (spec.traffic.longLived.maxStreamLifetimeSeconds), applied by an EnvoyFilter on the gateway's
   * pods; null without a bound. Not a pod field: every path emits the EnvoyFilter beside the pod.
   */
  streamLimits: StreamLimitsData | null;
};

/** One Envoy limit: its value and why (the plan's formula, docs/long-lived.md). */
export type StreamLimit = { seconds: number; why: string };

/**
 * The limits that make long-lived streams rotate before any drain has to cut them. On the
 * gateway's HTTP connection managers: `common_http_protocol_options.max_connection_duration`
 * (GOAWAY to HTTP/2 and gRPC clients first) and `max_stream_duration` (the cut); on its TCP proxies:
 * `max_downstream_connection_duration`.
 */
export type StreamLimitsData = {
  /** The EnvoyFilter's name. */
  name: string;
  maxConnectionDuration: StreamLimit;
  maxStreamDuration: StreamLimit;
  /** Null unless spec.traffic.longLived.kinds lists tcp. */
  tcpMaxDownstreamConnectionDuration: StreamLimit | null;
};

/** A spec the pod changes cannot be derived from (a name too long for the derived objects). */
export class PodChangesError extends GracegateError {}

function probe(path: string, periodSeconds: number, failureThreshold: number) {
  return {
    httpGet: { path, port: HC_HEALTH_PORT_NAME, scheme: 'HTTP' as const },
    periodSeconds,
    timeoutSeconds: 2,
    failureThreshold,
    successThreshold: 1,
  };
}

function hcContainer(health: HealthSpec, metricsPort: number, witnessPort: number, image: string, kind: HcSidecarKind): Container {
  return {
    name: HC_CONTAINER_NAME,
    image,
    imagePullPolicy: 'IfNotPresent',
    // A native sidecar: started before istio-proxy, SIGTERM only after istio-proxy exited, restarted
    // if it dies while the pod terminates (docs/native-sidecar.md).
    ...(kind === 'native' ? { restartPolicy: 'Always' as const } : {}),
    command: ['gracegate', 'hc', '--config', HC_CONFIG_PATH],
    // The node's addresses: the witness port serves the kubelet's hooks from them (or from the
    // pod's default gateway, read from the pod's routes) and answers everyone else 403.
    env: [{ name: HOST_IPS_ENV, valueFrom: { fieldRef: { fieldPath: 'status.hostIPs' } } }],
    // The control port (127.0.0.1 only) and the witness port (the kubelet's preStop only) are
    // deliberately not declared: a declared port invites a Service to expose it.
    ports: [
      {
        name: HC_HEALTH_PORT_NAME,
        containerPort: health.port,
        protocol: 'TCP',
        ...(health.exposure === 'hostPort' ? { hostPort: health.hostPort ?? health.port } : {}),
      },
      {
        // Read-only GET /metrics, scraped on the pod IP by the PodMonitor; no Service exposes it.
        name: HC_METRICS_PORT_NAME,
        containerPort: metricsPort,
        protocol: 'TCP',
      },
    ],
    // Readiness is K8s's party (/health), never the LB's /health_check.html (docs/facts.md §1): pointing it
    // at the LB path would pull the K8s endpoint and the LB backend at the same instant.
    readinessProbe: probe(PATHS.readiness, 2, 2),
    // Liveness answers 200 for as long as the process is fine, draining included. Generous (6 x 10 s):
    // a restart is harmless thanks to the witness, but it is never useful mid-sequence.
    livenessProbe: probe(PATHS.liveness, 10, 6),
    // Native: the kubelet starts istio-proxy only once this passes, so the LB's first probe of a new
    // pod finds the sidecar listening. 1 s x 30: the image answers within half a second (docs/images.md).
    ...(kind === 'native' ? { startupProbe: probe(PATHS.liveness, 1, 30) } : {}),
    // Blocks until the sequence ends; starts it only with the witness (see hcConfig.terminationWitness).
    // An httpGet, not `exec gracegate drain`: the kubelet starts no process in the hc container, so
    // the sequence starts within milliseconds of the deletion instead of a throttled Node start-up
    // later (both measured on the test cluster, docs/cluster.md). The witness port, as the
    // proxy's hold: the LB and the NodePort cannot reach it. A native sidecar's preStop also runs at
    // the pod's deletion, with the others (only its SIGTERM waits).
    lifecycle: { preStop: { httpGet: { path: PATHS.hcStopping, port: witnessPort, scheme: 'HTTP' } } },
    resources: { requests: { ...HC_RESOURCES.requests }, limits: { ...HC_RESOURCES.limits } },
    securityContext: {
      runAsNonRoot: true,
      runAsUser: HC_RUN_AS,
      runAsGroup: HC_RUN_AS,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    volumeMounts: [
      { name: HC_CONFIG_VOLUME, mountPath: HC_CONFIG_DIR, readOnly: true },
      { name: HC_STATE_VOLUME, mountPath: HC_STATE_DIR },
    ],
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
}

function antiAffinity(plan: Plan, selector: Record<string, string>): Affinity | null {
  // Class-wide defaults apply to every Gateway of a class: one term must select each Gateway's own
  // pods, so the gateway name comes from the scheduled pod (matchLabelKeys), not from the spec.
  const term: PodAffinityTerm = plan.chart.defaultsForClass
    ? {
        labelSelector: { matchExpressions: [{ key: GATEWAY_API_NAME_LABEL, operator: 'Exists' }] },
        matchLabelKeys: [GATEWAY_API_NAME_LABEL],
        topologyKey: 'kubernetes.io/hostname',
      }
    : { labelSelector: { matchLabels: { ...selector } }, topologyKey: 'kubernetes.io/hostname' };
  return hostnameAntiAffinity(plan.rollout.antiAffinity, term);
}

/** Who may reach one of the sidecar's ports: addresses (CIDRs) and namespaces (every pod in them). */
export type PolicySources = { ipBlocks: string[]; namespaces: string[] };

/**
 * The NetworkPolicy over the sidecar's ports (docs/hc.md, "Exposure"). Traffic from the pod's own
 * node is always allowed by a NetworkPolicy, so the kubelet's hooks and probes need no rule.
 * - health port: the LB's sources; null when the spec does not know them (the port stays open to
 *   every source, finding network-policy-lb-sources-unknown);
 * - witness port: nobody else (the kubelet's preStop and the hc's own hooks come from the node);
 * - metrics port: the scrapers' namespaces and addresses;
 * - every other port (the gateway's traffic, Istio's status and stats ports), TCP, UDP and SCTP:
 *   from anywhere, as without the policy.
 */
export type NetworkPolicyData = {
  name: string;
  healthPort: number;
  witnessPort: number;
  metricsPort: number;
  healthFrom: PolicySources | null;
  metricsFrom: PolicySources;
};

function networkPolicyData(plan: Plan, name: string): NetworkPolicyData | null {
  const np = plan.networkPolicy;
  if (!np.enabled) return null;
  const lbKnown = np.lbSourceRanges !== undefined || np.lbNamespaces.length > 0;
  return {
    name,
    healthPort: plan.health.port,
    witnessPort: plan.health.witnessPort,
    metricsPort: plan.observability.metricsPort,
    healthFrom: lbKnown ? { ipBlocks: [...(np.lbSourceRanges ?? [])], namespaces: [...np.lbNamespaces] } : null,
    metricsFrom: { ipBlocks: [...np.metrics.sourceRanges], namespaces: [...np.metrics.namespaces] },
  };
}

function gatewayServiceHealthPort(plan: Plan): GatewayServicePortData | null {
  if (plan.healthProbe.via !== 'gateway-service') return null;
  const h = plan.health;
  return { name: HC_HEALTH_PORT_NAME, protocol: 'TCP', port: h.port, targetPort: h.port, ...(h.nodePort !== undefined ? { nodePort: h.nodePort } : {}) };
}

function healthService(plan: Plan, name: string): HealthServiceData | null {
  const health = plan.health;
  // The LB probes a port of the gateway's own Service: no Service of its own.
  if (plan.healthProbe.via === 'gateway-service') return null;
  switch (health.exposure) {
    case 'nodePort':
      return {
        name,
        type: 'NodePort',
        port: health.port,
        ...(health.nodePort !== undefined ? { nodePort: health.nodePort } : {}),
        externalTrafficPolicy: 'Local',
      };
    case 'clusterIP':
      return { name, type: 'ClusterIP', port: health.port };
    case 'hostPort':
      // The LB probes <node>:<hostPort> straight into the pod: no Service in the path.
      return null;
  }
}

function autoscalerData(plan: Plan): AutoscalerData | null {
  const s = plan.scaling;
  if (s.mode !== 'autoscaled') return null;
  return {
    minReplicas: s.minReplicas,
    maxReplicas: s.maxReplicas,
    ...(s.targetCPUUtilizationPercentage !== undefined ? { targetCPUUtilizationPercentage: s.targetCPUUtilizationPercentage } : {}),
    ...(s.behavior !== undefined ? { behavior: structuredClone(s.behavior) as HpaBehavior } : {}),
  };
}

function gatewayApiData(plan: Plan): GatewayApiData | null {
  const chart = plan.chart;
  if (chart.kind !== 'gateway-api') return null;
  const { name, namespace } = plan.gateway;
  const className = chart.gatewayClassName ?? DEFAULT_GATEWAY_CLASS;
  const classWide = chart.defaultsForClass;
  return {
    className,
    deploymentName: `${name}-${className}`,
    parametersName: classWide ? `${name}-gracegate-class-defaults` : `${name}-gracegate-parameters`,
    parametersNamespace: classWide ? classWide.systemNamespace : namespace,
    classDefaults: classWide ? { gateways: classWide.gateways.map((g) => ({ ...g })) } : null,
  };
}

/**
 * Istio's stats matcher inclusions the pod needs: what the sidecar counts, and the loss alert's two
 * counters unless nothing scrapes them.
 */
export function proxyStatsMatcher(plan: Plan): { inclusionSuffixes: string[] } {
  const websockets = plan.longLived?.kinds.includes('websocket') ? [UPGRADES_STATS_SUFFIX] : [];
  return { inclusionSuffixes: [...COUNTING_STATS_SUFFIXES, ...websockets, ...(plan.observability.prometheus === 'none' ? [] : LOSS_STATS_SUFFIXES)] };
}

/** A short, stable hash of the hc config: the annotation that rolls the pods when the plan changes. */
export function hcConfigHash(config: HcConfigInput): string {
  return createHash('sha256').update(JSON.stringify(config)).digest('hex').slice(0, 16);
}

/**
 * The pod changes a plan requires. Pure; throws PodChangesError on a spec it cannot express (a name
 * too long), HcConfigRejectedError on an hc config the sidecar would refuse.
 */
export function podChanges(plan: Plan, options: PodChangesOptions = {}): PodChanges {
  const { name, namespace } = plan.gateway;
  if (name.length > MAX_GATEWAY_NAME_LENGTH) {
    throw new PodChangesError(
      `metadata.name '${name}' is ${name.length} characters; gracegate derives '${name}-gracegate-health' from it, so it must be at most ${MAX_GATEWAY_NAME_LENGTH}`,
    );
  }
  const names = objectNames(name);
  const selectorLabels = podSelectorLabels(plan.chart.kind, name);
  const hcConfig = hcConfigFor(plan);
  // Every delivery path (synth, post-render, Argo CD, the constructs) gets this check here: a
  // ConfigMap the sidecar refuses would crash-loop every gateway pod.
  checkHcConfig(hcConfig);
  const t = plan.timings;
  const statsMatcher = proxyStatsMatcher(plan);
  return {
    gateway: { name, namespace },
    selectorLabels,
    replicas: plan.replicas,
    autoscaler: autoscalerData(plan),
    gatewayApi: gatewayApiData(plan),
    hcContainer: hcContainer(plan.health, plan.observability.metricsPort, plan.health.witnessPort, options.image ?? DEFAULT_IMAGE, plan.hcSidecar.kind),
    hcPlacement: plan.hcSidecar.kind === 'native' ? 'initContainers' : 'containers',
    imagePullSecrets: plan.imagePullSecrets.map((name) => ({ name })),
    proxy: {
      containerName: plan.proxy.containerName,
      // A numeric port: httpGet hooks go to the pod IP, and a named port would have to be a port of
      // the proxy container itself (the kubelet resolves names in the hooked container only). The
      // witness port, not the health port: the LB and whoever reaches the NodePort must not be able
      // to hold or fake the termination witness.
      lifecycle: { preStop: { httpGet: { path: PATHS.waitClosed, port: plan.health.witnessPort, scheme: 'HTTP' } } },
    },
    volumes: [
      { name: HC_CONFIG_VOLUME, configMap: { name: names.hcConfigMap, defaultMode: 0o444 } },
      { name: HC_STATE_VOLUME, emptyDir: { sizeLimit: HC_STATE_SIZE_LIMIT } },
    ],
    terminationGracePeriodSeconds: t.terminationGracePeriodSeconds,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: plan.rollout.maxSurge, maxUnavailable: plan.rollout.maxUnavailable } },
    minReadySeconds: t.minReadySeconds,
    affinity: antiAffinity(plan, selectorLabels),
    podAnnotations: {
      // JSON is YAML, which is what Istio parses this annotation as.
      [ANNOTATIONS.proxyConfig]: JSON.stringify({
        terminationDrainDuration: Duration.seconds(t.terminationDrainDurationSeconds).toString(),
        drainDuration: Duration.seconds(t.drainDurationSeconds).toString(),
        proxyStatsMatcher: statsMatcher,
      }),
      [ANNOTATIONS.hcConfigHash]: hcConfigHash(hcConfig),
      // The hc's probes stay its own (ANNOTATIONS.rewriteAppHttpProbers says why).
      [ANNOTATIONS.rewriteAppHttpProbers]: 'false',
    },
    statsInclusionSuffixes: statsMatcher.inclusionSuffixes,
    hcConfig,
    hcConfigMapName: names.hcConfigMap,
    healthService: healthService(plan, names.healthService),
    gatewayServiceHealthPort: gatewayServiceHealthPort(plan),
    networkPolicy: networkPolicyData(plan, names.networkPolicy),
    disruptionBudget: plan.rollout.pdbMaxUnavailable === null ? null : { name: names.disruptionBudget, maxUnavailable: plan.rollout.pdbMaxUnavailable },
    gatewayServiceAnnotations: lbServiceAnnotations(plan),
    gatewayServiceTrafficPolicy:
      (plan.health.exposure === 'nodePort' || plan.health.exposure === 'hostPort') && plan.loadBalancer.cloudTargetType === undefined ? 'Local' : null,
    namespaceLabels: lbNamespaceLabels(plan),
    streamLimits: streamLimits(plan, names.streamLimits),
  };
}

/** The plan's long-lived limits as the EnvoyFilter sets them; null without a lifetime bound. */
function streamLimits(plan: Plan, name: string): StreamLimitsData | null {
  const ll = plan.longLived;
  if (!ll?.maxStreamDurationSeconds || !ll.maxConnectionDurationSeconds) return null;
  const limit = (d: Derived, what: string): StreamLimit => ({ seconds: d.value, why: `${d.formula}: ${what}` });
  return {
    name,
    maxConnectionDuration: limit(ll.maxConnectionDurationSeconds, 'HTTP/2 and gRPC clients get GOAWAY and move to a new connection before the cut'),
    maxStreamDuration: limit(
      ll.maxStreamDurationSeconds,
      'every HTTP stream (WebSocket, SSE, gRPC) ends at this age, so a drain waits for the rotation instead of cutting',
    ),
    tcpMaxDownstreamConnectionDuration: ll.tcpMaxConnectionDurationSeconds
      ? limit(ll.tcpMaxConnectionDurationSeconds, 'a TCP connection is closed (FIN) at this age; the tcp_proxy has no drain')
      : null,
  };
}

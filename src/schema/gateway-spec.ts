import { z } from 'zod';
import { DNS_LABEL, duration, nodeCount, port, replicaCount, rolloutSchema } from '../model/spec-fields';
import { loadBalancerSchema } from '../lb/registry';
import { DEFAULT_PORTS, SEQUENCES } from '../contract/hc';
import { autoscalingSchema } from './autoscaling';
import { chartSchema } from './chart';
import { longLivedSchema } from './long-lived';
import { addressOrBlockList } from '../contract/addresses';
import { networkPolicySchema } from './network-policy';
import { START_PROPAGATION_SECONDS } from './start-path';
import { parseDurationDist } from '../loss/duration-dist';
import { GracegateError } from '../core/errors';

/** What the plan assumes of the traffic where the spec does not say (docs/simulate.md). */
export const DEFAULT_TRAFFIC = {
  requestsPerSecondPerPod: 100,
  /** The default request lengths: log-normal through p50 = p99 / this and the spec's p99. */
  p50Divisor: 25,
} as const;

/**
 * The GracefulGateway spec: one gateway and the LB in front of it. This zod schema is the single
 * source of the spec's types, validation, error messages and JSON Schema (`gracegate schema`).
 */

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NODE_PORT_RANGE = { min: 30000, max: 32767 } as const;

const trafficSchema = z.strictObject({
  /** The long-request p99 in seconds: the one number the drain timeout and grace period follow from. */
  longRequestP99Seconds: duration.refine((s) => s > 0, 'must be above 0').describe('p99 of the longest requests/streams through the gateway, seconds'),
  /**
   * Peak requests per second one gateway pod serves. Only used to put a number on drain-first's
   * residual loss (requests the LB is still connecting at the instant of DOWN). Omitted: the
   * finding gives the formula instead of a number.
   */
  requestsPerSecondPerPod: z
    .number()
    .positive()
    .optional()
    .describe(`peak requests/s one gateway pod serves: the expected loss of each order scales with it; default ${DEFAULT_TRAFFIC.requestsPerSecondPerPod}`),
  /**
   * How long requests take, in `gracegate simulate`'s --duration-dist grammar (docs/simulate.md):
   * the plan ranks the orders by the loss each is expected to cause under it. `gracegate measure p99
   * --write` fills it from the access log. Omitted: log-normal through p50 = longRequestP99Seconds /
   * 25 and p99 = longRequestP99Seconds, none longer than ceil(1.2 x longRequestP99Seconds)
   * (src/plan/order-choice.ts, docs/simulate.md).
   */
  requestDurations: z
    .string()
    .superRefine((text, ctx) => {
      try {
        parseDurationDist(text);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: err instanceof GracegateError ? err.problems.map((p) => p.message).join('; ') : String(err) });
      }
    })
    .optional()
    .describe(
      'request lengths, e.g. lognormal:p50=80ms,p99=2s (the grammar of gracegate simulate --duration-dist); default log-normal from longRequestP99Seconds',
    ),
  /**
   * Requests one pod termination may be expected to lose before the plan calls it an error (finding
   * no-lossless-order); omitted, a loss no order avoids is a warning.
   */
  maxExpectedLossPerTermination: z
    .number()
    .min(0)
    .optional()
    .describe('requests one pod termination may lose before the plan errs (finding no-lossless-order); omitted: a warning only'),
  /**
   * One LB-to-pod round trip in milliseconds (a refused connect takes one). A plain number because
   * spec durations are rounded to the millisecond and a datacenter hop is less. @default 0.5.
   */
  lbToPodRoundTripMs: z.number().positive().default(0.5).describe('LB-to-pod round trip in ms (a refused connect takes one); default 0.5, one datacenter hop'),
  /** WebSocket, gRPC streams, SSE, TCP: how they end in a drain (src/plan/long-lived.ts, docs/long-lived.md). */
  longLived: longLivedSchema.optional().describe('long-lived streams and connections, and whether their clients reconnect (docs/long-lived.md)'),
});

const healthSchema = z
  .strictObject({
    /** How the LB reaches the sidecar's health port. */
    exposure: z
      .enum(['nodePort', 'hostPort', 'clusterIP'])
      .describe('nodePort (Service, externalTrafficPolicy Local) | hostPort | clusterIP (in-cluster LBs only)'),
    /** The sidecar's health port inside the pod. @default 18180. */
    port: port.default(DEFAULT_PORTS.health).describe(`container port of the read-only health server; default ${DEFAULT_PORTS.health}`),
    /** Node port for `exposure: nodePort` (30000-32767). Omitted: Kubernetes allocates one. */
    nodePort: z.int().optional().describe('fixed NodePort (30000-32767) for exposure nodePort'),
    /** Host port for `exposure: hostPort`. @default the health port. */
    hostPort: port.optional().describe('host port for exposure hostPort; default = port'),
    /**
     * With `exposure: nodePort`, which Service carries the health port: `gateway`, the gateway's own
     * Service (one slice, one sync with its traffic: a new pod's probe passes only once the node's
     * traffic rule leads to it), or `own`, a health Service of its own that publishes not-ready
     * addresses (the sidecar then holds its first 200: docs/hc.md, "The start hold"). @default
     * gateway where the sequence ends before istio-proxy's readiness gives up after the drain, else
     * own (docs/cluster.md, "The start half of a rollout").
     */
    service: z
      .enum(['gateway', 'own'])
      .optional()
      .describe("exposure nodePort: the health port on the gateway's own Service, or a health Service of its own; default chosen by the plan"),
    /** Control port (127.0.0.1 only). @default 18181. */
    controlPort: port.default(DEFAULT_PORTS.control).describe(`loopback-only control port of the sidecar; default ${DEFAULT_PORTS.control}`),
    /**
     * Port of the termination witness (istio-proxy's preStop GET /wait-closed), in no Service: only the
     * kubelet, at the pod IP, should reach it (docs/hc.md, "Restart safety"). @default 18182.
     */
    witnessPort: port
      .default(DEFAULT_PORTS.witness)
      .describe(`port of istio-proxy's preStop (the termination witness), exposed by no Service; default ${DEFAULT_PORTS.witness}`),
    /**
     * Addresses or CIDR blocks the witness port serves besides the node's addresses and the pod's
     * default gateway: for a CNI whose node traffic (the kubelet's hooks) comes from neither. The
     * sidecar then cannot tell the kubelet from other callers in them, and the NetworkPolicy is the
     * defence (finding witness-source-by-policy-only; docs/hc.md, "Where the witness may come from").
     * @default [] (the kubelet's hooks come from the node or the pod's gateway: measured for the bridge CNI).
     */
    witnessAllowFrom: addressOrBlockList
      .default([])
      .describe(
        "addresses or CIDRs the kubelet's hooks come from when the CNI sends them from neither the node's addresses nor the pod's gateway; default none",
      ),
    /**
     * How the hc sidecar runs: `native` (an init container with `restartPolicy: Always`, KEP-753:
     * started before the proxy, SIGTERM only after it exited; Kubernetes 1.29+) or `container` (an
     * ordinary container next to the proxy). @default native from spec.kubernetesVersion 1.33, else container (docs/native-sidecar.md).
     */
    sidecar: z
      .enum(['native', 'container'])
      .optional()
      .describe(
        'native (init container with restartPolicy Always, Kubernetes 1.29+) | container; default native from spec.kubernetesVersion 1.33, else container',
      ),
  })
  .superRefine((health, ctx) => {
    if (health.nodePort !== undefined) {
      if (health.exposure !== 'nodePort')
        ctx.addIssue({ code: 'custom', path: ['nodePort'], message: `nodePort is only used with exposure nodePort (exposure is ${health.exposure})` });
      else if (health.nodePort < NODE_PORT_RANGE.min || health.nodePort > NODE_PORT_RANGE.max) {
        ctx.addIssue({
          code: 'custom',
          path: ['nodePort'],
          message: `${health.nodePort} is outside the NodePort range ${NODE_PORT_RANGE.min}-${NODE_PORT_RANGE.max}`,
        });
      }
    }
    if (health.service !== undefined && health.exposure !== 'nodePort') {
      ctx.addIssue({ code: 'custom', path: ['service'], message: `service is only used with exposure nodePort (exposure is ${health.exposure})` });
    }
    if (health.hostPort !== undefined && health.exposure !== 'hostPort') {
      ctx.addIssue({ code: 'custom', path: ['hostPort'], message: `hostPort is only used with exposure hostPort (exposure is ${health.exposure})` });
    }
    if (health.controlPort === health.port) ctx.addIssue({ code: 'custom', path: ['controlPort'], message: 'controlPort must differ from port' });
    if (health.witnessPort === health.port || health.witnessPort === health.controlPort) {
      ctx.addIssue({ code: 'custom', path: ['witnessPort'], message: 'witnessPort must differ from port and controlPort' });
    }
  });

const envoySettingsSchema = z.strictObject({
  /** Istio `terminationDrainDuration`: how long pilot-agent lets Envoy drain after SIGTERM. @default 5s (Istio). */
  terminationDrainDurationSeconds: duration
    .optional()
    .describe("proxy.istio.io/config terminationDrainDuration; default 5 s (Istio's), enough because the proxy is held until the drain is done"),
  /** Istio `drainDuration` (Envoy --drain-time-s). @default 45s (Istio). */
  drainDurationSeconds: duration.optional().describe('proxy.istio.io/config drainDuration (Envoy --drain-time-s); default 45 s'),
  /** Envoy admin port. @default 15000. */
  adminPort: port.default(15000).describe('Envoy admin port; default 15000'),
  /** Name of the proxy container in the gateway pod. @default istio-proxy. */
  containerName: z.string().regex(DNS_LABEL).default('istio-proxy').describe('proxy container name; default istio-proxy'),
});

const drainSchema = z.strictObject({
  /** Upper bound on waiting for in-flight 0. @default - ceil(1.2 x longRequestP99Seconds). */
  timeout: duration.optional().describe('drain timeout; default ceil(1.2 x longRequestP99Seconds)'),
  /** Seconds added to the LB detection time. @default 6. */
  lbMargin: duration.default(6).describe('seconds added to LB detection to get the LB buffer; default 6'),
  /** Seconds added to the grace period beyond the whole sequence. @default 30. */
  safetyMargin: duration.default(30).describe('seconds added to terminationGracePeriodSeconds; default 30'),
  /** How often the sidecar polls Envoy's in-flight count. @default 1s. */
  pollInterval: duration
    .default(1)
    .refine((s) => s >= 0.05, 'must be at least 50ms')
    .describe('Envoy stats poll interval; default 1 s'),
});

/**
 * The path from a new pod's readiness to the nodes' rules leading traffic to it (docs/hc.md, "The
 * start hold"): what the sidecar's start hold waits for where the LB's probe does not pass through
 * those rules.
 */
const kubeProxySchema = z.strictObject({
  /** kube-proxy's `minSyncPeriod` (iptables and nftables modes): a changed Service waits at most this long for its node's next sync. @default 1s (kube-proxy's default) */
  minSyncPeriod: duration.default(1).describe("kube-proxy's minSyncPeriod (its iptables or nftables block); default 1 s, kube-proxy's own"),
  /**
   * The rest of the path, beyond minSyncPeriod: from the kubelet's readiness probe of the sidecar
   * answered to the node's rules leading to the pod (the pod's other probes, its status written,
   * the EndpointSlice controller, kube-proxy's rule write). @default measured on the test cluster (docs/cluster.md)
   */
  propagation: duration
    .default(START_PROPAGATION_SECONDS)
    .describe(
      `the rest of the path from the kubelet's readiness probe to the node's rules (status, EndpointSlice, the rule write); default ${START_PROPAGATION_SECONDS} s, measured on the test cluster`,
    ),
});

/**
 * Credentials for one registry host, for containerd's CRI config (`registry.configs."<host>".auth`):
 * hosts.toml holds none (containerd docs/hosts.md). Prefer spec.imagePullSecrets where the image's
 * own registry needs them (docs/manifests.md, "Registries and credentials").
 */
const registryAuthSchema = z.union([z.strictObject({ username: z.string().min(1), password: z.string().min(1) }), z.strictObject({ auth: z.string().min(1) })]);

/**
 * How Prometheus reads the sidecars (docs/observability.md). The sidecar serves GET /metrics on
 * its own read-only port; Istio's 15020 merge cannot carry it on a gateway.
 */
const observabilitySchema = z.strictObject({
  /**
   * `operator`: synth writes a PodMonitor and a PrometheusRule (the Prometheus Operator's CRDs, as
   * kube-prometheus-stack installs them). `scrape-config`: a plain Prometheus scrape job and a rule
   * file instead. `none`: no Prometheus files, and the sidecar exits at once after SIGTERM.
   * @default operator
   */
  prometheus: z
    .enum(['operator', 'scrape-config', 'none'])
    .default('operator')
    .describe('operator (PodMonitor + PrometheusRule) | scrape-config (scrape job + rule file) | none; default operator'),
  /** How often Prometheus scrapes the sidecars. @default 15s */
  scrapeInterval: duration
    .default(15)
    .refine((s) => s >= 1, 'must be at least 1s')
    .describe('scrape interval of the sidecar metrics; default 15 s'),
  /** The sidecar's metrics port (GET /metrics, all interfaces, read-only, in no Service). @default 18183 */
  metricsPort: port.default(18183).describe('container port of the read-only /metrics; default 18183'),
  /**
   * The addresses or CIDR blocks Prometheus scrapes from (its pods' range): only their scrape
   * after SIGTERM is the final one. Unset: a source that scraped before SIGTERM (docs/observability.md).
   */
  scrapers: addressOrBlockList.optional().describe("Prometheus' addresses or CIDR blocks: only their scrape after SIGTERM is the final one"),
});

const registryMirrorSchema = z.strictObject({
  host: z.string().min(1).describe('mirror URL, e.g. https://harbor.example.com:8443/v2/dockerhub'),
  /** Credentials for this mirror, for the node's containerd (a pull secret never reaches a mirror). */
  auth: registryAuthSchema.optional().describe("credentials for this mirror, written to containerd's CRI config (keep that file out of Git)"),
  capabilities: z
    .array(z.enum(['pull', 'resolve', 'push']))
    .min(1)
    .default(['pull', 'resolve']),
  skipVerify: z.boolean().default(false),
  overridePath: z.boolean().default(false),
  ca: z.union([z.string(), z.array(z.string())]).optional(),
  client: z.union([z.string(), z.array(z.string()), z.array(z.tuple([z.string(), z.string()]))]).optional(),
  header: z.record(z.string(), z.union([z.string(), z.array(z.string())])).optional(),
});

const registrySchema = z.strictObject({
  /** Registry host as images name it (`docker.io`, `harbor.corp:8443`), or `_default`. */
  prefix: z.string().min(1).describe('registry host[:port] as images name it, or _default'),
  /** Upstream server URL. @default - omitted: containerd's own (https://<prefix>; registry-1.docker.io for docker.io). */
  server: z
    .string()
    .regex(/^https?:\/\//, 'must be an http(s) URL')
    .optional()
    .describe("upstream server URL; omitted: containerd's own default (https://<prefix>, registry-1.docker.io for docker.io)"),
  mirrors: z.array(registryMirrorSchema).default([]),
  /** Credentials for the upstream server, for the node's containerd (CRI config; kubespray's containerd_registry_auth). */
  auth: registryAuthSchema.optional().describe("credentials for the upstream server, written to containerd's CRI config (keep that file out of Git)"),
});

export const gatewaySpecSchema = z
  .strictObject({
    apiVersion: z.literal('gracegate.dev/v1alpha1'),
    kind: z.literal('GracefulGateway'),
    metadata: z.strictObject({
      name: z.string().regex(DNS_LABEL, 'must be a DNS label (lower case, digits, -)').max(63),
      namespace: z.string().regex(DNS_LABEL, 'must be a DNS label (lower case, digits, -)').max(63).default('istio-ingress'),
    }),
    spec: z
      .strictObject({
        /** The cluster's Kubernetes version (`1.33`): what the pod may use (native sidecars). @default unknown: only what every version has. */
        kubernetesVersion: z
          .string({
            error: (issue) =>
              typeof issue.input === 'number'
                ? `quote it: YAML reads ${issue.input} as a number (1.30 becomes 1.3); write kubernetesVersion: "1.30"`
                : undefined,
          })
          .regex(/^v?1\.\d+(\.\d+)?$/, 'must look like 1.33 (or 1.33.2)')
          .optional()
          .describe("the cluster's Kubernetes minor version, e.g. 1.33; chooses the hc sidecar kind (native sidecars)"),
        replicas: replicaCount().optional().describe('gateway replicas, when no HPA scales the gateway (else spec.autoscaling)'),
        autoscaling: autoscalingSchema
          .optional()
          .describe("the gateway's HorizontalPodAutoscaler (instead of spec.replicas): the plan covers every count from minReplicas to maxReplicas"),
        nodes: nodeCount().describe('nodes the gateway pods may run on (for the rollout analysis)'),
        chart: chartSchema,
        traffic: trafficSchema,
        loadBalancer: loadBalancerSchema,
        /**
         * The termination order to run whatever the expected losses say (the plan ranks them all and
         * warns where this one loses more: finding sequence-not-least-loss). Omitted: the least.
         */
        sequence: z
          .enum(SEQUENCES)
          .optional()
          .describe('run this order whatever the expected losses say (finding sequence-not-least-loss); default: the order with the least'),
        health: healthSchema,
        rollout: rolloutSchema.prefault({}),
        envoy: envoySettingsSchema.prefault({}),
        drain: drainSchema.prefault({}),
        kubeProxy: kubeProxySchema.prefault({}),
        observability: observabilitySchema.prefault({}),
        networkPolicy: networkPolicySchema.prefault({}),
        registry: z.array(registrySchema).default([]),
        /**
         * The nodes' containerd version (`2.3`): which config.toml fragment synth writes for
         * spec.registry (config version 2 for 1.x, 3 for 2.0 to 2.2, 4 from 2.3; containerd RELEASES.md).
         * @default unknown: one fragment per config version, each naming the containerd it is for.
         */
        containerdVersion: z
          .string({
            error: (issue) =>
              typeof issue.input === 'number'
                ? `quote it: YAML reads ${issue.input} as a number (2.10 becomes 2.1); write containerdVersion: "${issue.input}"`
                : undefined,
          })
          .regex(/^v?\d+\.\d+(\.\d+)?$/, 'must look like 2.3 (or 2.3.1)')
          .optional()
          .describe(
            "the nodes' containerd version, e.g. 2.3: synth writes the config.toml fragment in its config version (2, 3 or 4); default: one per config version",
          ),
        /**
         * Secrets (type kubernetes.io/dockerconfigjson, in the gateway's namespace, made by you) the
         * kubelet pulls the gateway pod's images with: the usual way to a private registry, with no
         * credentials in gracegate's input or output.
         */
        imagePullSecrets: z
          .array(z.string().regex(DNS_SUBDOMAIN, 'must be a Secret name (lower case, digits, -, .)').max(253))
          .default([])
          .describe('names of existing docker-registry Secrets in the gateway namespace, for the pod'),
      })
      .superRefine(replicasOrAutoscaling, { when: () => true }),
  })
  .superRefine((doc, ctx) => {
    const { spec } = doc;
    if (spec.health.exposure === 'hostPort' && spec.replicas !== undefined && spec.replicas > spec.nodes) {
      ctx.addIssue({
        code: 'custom',
        path: ['spec', 'replicas'],
        message: `hostPort allows one pod per node: replicas (${spec.replicas}) cannot exceed nodes (${spec.nodes})`,
      });
    }
    if (spec.health.exposure === 'hostPort' && spec.autoscaling && spec.autoscaling.maxReplicas > spec.nodes) {
      ctx.addIssue({
        code: 'custom',
        path: ['spec', 'autoscaling', 'maxReplicas'],
        message: `hostPort allows one pod per node: maxReplicas (${spec.autoscaling.maxReplicas}) cannot exceed nodes (${spec.nodes}); the HPA's extra pods would stay Pending`,
      });
    }
    if (spec.chart.kind === 'gateway-api' && spec.envoy.containerName !== 'istio-proxy') {
      ctx.addIssue({
        code: 'custom',
        path: ['spec', 'envoy', 'containerName'],
        message: `istiod names the proxy container of a Gateway's Deployment istio-proxy, not '${spec.envoy.containerName}': remove spec.envoy.containerName`,
      });
    }
    if (spec.rollout.maxSurge === 0 && spec.rollout.maxUnavailable === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['spec', 'rollout', 'maxUnavailable'],
        message: "'maxSurge' and 'maxUnavailable' cannot both be 0 (Kubernetes rejects it)",
      });
    }
    const ports = { 'health.port': spec.health.port, 'health.controlPort': spec.health.controlPort };
    for (const [name, value] of Object.entries(ports)) {
      if (spec.observability.metricsPort === value)
        ctx.addIssue({ code: 'custom', path: ['spec', 'observability', 'metricsPort'], message: `metricsPort ${value} is also spec.${name}` });
    }
    if (spec.drain.timeout !== undefined && spec.drain.timeout <= 0) {
      ctx.addIssue({ code: 'custom', path: ['spec', 'drain', 'timeout'], message: 'must be above 0' });
    }
    const prefixes = new Set<string>();
    spec.registry.forEach((r, i) => {
      if (prefixes.has(r.prefix)) ctx.addIssue({ code: 'custom', path: ['spec', 'registry', i, 'prefix'], message: `registry '${r.prefix}' is listed twice` });
      prefixes.add(r.prefix);
    });
  });

/**
 * Exactly one of `replicas` (a fixed count) and `autoscaling` (an HPA owns the count). Runs even
 * when other fields have problems, so a spec missing both hears about it in the same pass.
 */
function replicasOrAutoscaling(spec: { replicas?: unknown; autoscaling?: unknown } | undefined, ctx: z.RefinementCtx): void {
  if (typeof spec !== 'object' || spec === null) return; // spec itself is missing or not a map: said elsewhere
  if (spec.replicas === undefined && spec.autoscaling === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['replicas'],
      message: 'required (a whole number), or spec.autoscaling {minReplicas, maxReplicas} when an HPA scales the gateway',
    });
  } else if (spec.replicas !== undefined && spec.autoscaling !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['autoscaling'],
      message: "give spec.replicas or spec.autoscaling, not both: with an HPA the replica count is the HPA's",
    });
  }
}

export type GatewaySpecInput = z.input<typeof gatewaySpecSchema>;
export type GatewaySpec = z.output<typeof gatewaySpecSchema>;
export type HealthSpec = GatewaySpec['spec']['health'];
/** A spec with a fixed replica count (no HPA): what the fixed-count rollout plan reads. */
export type FixedReplicasSpec = GatewaySpec & { spec: { replicas: number } };
export type ObservabilitySpec = GatewaySpec['spec']['observability'];
export type NetworkPolicySpec = GatewaySpec['spec']['networkPolicy'];
export type KubeProxySpec = GatewaySpec['spec']['kubeProxy'];

import { z } from 'zod';
import { DNS_LABEL, duration, port, rolloutSchema } from './fields';
import { loadBalancerSchema } from '../lb/registry';

/**
 * The GracefulGateway spec: one gateway and the LB in front of it. This zod schema is the single
 * source of the spec's types, validation, error messages and JSON Schema (`gracegate schema`).
 */

const NODE_PORT_RANGE = { min: 30000, max: 32767 } as const;

const chartSchema = z.strictObject({
  /**
   * `istio-gateway`: the upstream `istio/gateway` chart, whose values schema refuses unknown keys.
   * `additional-containers`: an in-house chart with an `additionalContainers`-style hook.
   */
  kind: z.enum(['istio-gateway', 'additional-containers']).describe('which chart renders the gateway Deployment'),
  /** Chart version (`istio/gateway` keys differ by version: sidecar hook only from 1.27). */
  version: z.string().regex(/^\d+\.\d+(\.\d+)?([-+].*)?$/, 'must look like 1.27.9').describe('chart version'),
});

const trafficSchema = z.strictObject({
  /** The long-request p99 in seconds: the one number the drain timeout and grace period follow from. */
  longRequestP99Seconds: duration.refine((s) => s > 0, 'must be above 0').describe('p99 of the longest requests/streams through the gateway, seconds'),
  /**
   * Peak requests per second one gateway pod serves. Only used to put a number on drain-first's
   * residual loss (requests the LB is still connecting at the instant of DOWN). Omitted: the
   * finding gives the formula instead of a number.
   */
  requestsPerSecondPerPod: z.number().positive().optional().describe('peak requests/s one gateway pod serves; only used to estimate drain-first\'s residual loss'),
  /**
   * One LB-to-pod round trip in milliseconds (a refused connect takes one). A plain number because
   * spec durations are rounded to the millisecond and a datacenter hop is less. @default 0.5.
   */
  lbToPodRoundTripMs: z.number().positive().default(0.5).describe('LB-to-pod round trip in ms (a refused connect takes one); default 0.5, one datacenter hop'),
});

const healthSchema = z.strictObject({
  /** How the LB reaches the sidecar's health port. */
  exposure: z.enum(['nodePort', 'hostPort', 'clusterIP']).describe('nodePort (Service, externalTrafficPolicy Local) | hostPort | clusterIP (in-cluster LBs only)'),
  /** The sidecar's health port inside the pod. @default 18180. */
  port: port.default(18180).describe('container port of the read-only health server; default 18180'),
  /** Node port for `exposure: nodePort` (30000-32767). Omitted: Kubernetes allocates one. */
  nodePort: z.int().optional().describe('fixed NodePort (30000-32767) for exposure nodePort'),
  /** Host port for `exposure: hostPort`. @default the health port. */
  hostPort: port.optional().describe('host port for exposure hostPort; default = port'),
  /** Control port (127.0.0.1 only). @default 18181. */
  controlPort: port.default(18181).describe('loopback-only control port of the sidecar; default 18181'),
  /**
   * Port of the termination witness (istio-proxy's preStop GET /wait-closed), in no Service: only the
   * kubelet, at the pod IP, should reach it (docs/hc.md, "Restart safety"). @default 18182.
   */
  witnessPort: port.default(18182).describe("port of istio-proxy's preStop (the termination witness), exposed by no Service; default 18182"),
}).superRefine((health, ctx) => {
  if (health.nodePort !== undefined) {
    if (health.exposure !== 'nodePort') ctx.addIssue({ code: 'custom', path: ['nodePort'], message: `nodePort is only used with exposure nodePort (exposure is ${health.exposure})` });
    else if (health.nodePort < NODE_PORT_RANGE.min || health.nodePort > NODE_PORT_RANGE.max) {
      ctx.addIssue({ code: 'custom', path: ['nodePort'], message: `${health.nodePort} is outside the NodePort range ${NODE_PORT_RANGE.min}-${NODE_PORT_RANGE.max}` });
    }
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
  terminationDrainDurationSeconds: duration.optional().describe("proxy.istio.io/config terminationDrainDuration; default 5 s (Istio's), enough because the proxy is held until the drain is done"),
  /** Istio `drainDuration` (Envoy --drain-time-s). @default 45s (Istio). */
  drainDurationSeconds: duration.optional().describe('proxy.istio.io/config drainDuration (Envoy --drain-time-s); default 45 s'),
  /**
   * The HTTP connection manager's `drain_timeout`: idle keep-alive connections close only this
   * long after the drain starts, and the sidecar counts connections. @default 5s (Envoy's default).
   */
  hcmDrainTimeoutSeconds: duration.default(5).describe("HTTP connection manager drain_timeout; Envoy's default 5 s: idle keep-alive connections close only after it"),
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
  pollInterval: duration.default(1).refine((s) => s >= 0.05, 'must be at least 50ms').describe('Envoy stats poll interval; default 1 s'),
});

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
  prometheus: z.enum(['operator', 'scrape-config', 'none']).default('operator').describe('operator (PodMonitor + PrometheusRule) | scrape-config (scrape job + rule file) | none; default operator'),
  /** How often Prometheus scrapes the sidecars. @default 15s */
  scrapeInterval: duration.default(15).refine((s) => s >= 1, 'must be at least 1s').describe('scrape interval of the sidecar metrics; default 15 s'),
  /** The sidecar's metrics port (GET /metrics, all interfaces, read-only, in no Service). @default 18183 */
  metricsPort: port.default(18183).describe('container port of the read-only /metrics; default 18183'),
});

const registryMirrorSchema = z.strictObject({
  host: z.string().min(1).describe('mirror URL, e.g. https://harbor.example.com:8443/v2/dockerhub'),
  capabilities: z.array(z.enum(['pull', 'resolve', 'push'])).min(1).default(['pull', 'resolve']),
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
  server: z.string().regex(/^https?:\/\//, 'must be an http(s) URL').optional().describe("upstream server URL; omitted: containerd's own default (https://<prefix>, registry-1.docker.io for docker.io)"),
  mirrors: z.array(registryMirrorSchema).default([]),
  /** Credentials for kubespray's containerd_registry_auth (containerd < 2.0 only). */
  auth: z.union([
    z.strictObject({ username: z.string().min(1), password: z.string().min(1) }),
    z.strictObject({ auth: z.string().min(1) }),
  ]).optional(),
});

export const gatewaySpecSchema = z
  .strictObject({
    apiVersion: z.literal('gracegate.dev/v1alpha1'),
    kind: z.literal('GracefulGateway'),
    metadata: z.strictObject({
      name: z.string().regex(DNS_LABEL, 'must be a DNS label (lower case, digits, -)').max(63),
      namespace: z.string().regex(DNS_LABEL, 'must be a DNS label (lower case, digits, -)').max(63).default('istio-ingress'),
    }),
    spec: z.strictObject({
      replicas: z.int().min(1).describe('gateway replicas'),
      nodes: z.int().min(1).describe('nodes the gateway pods may run on (for the rollout analysis)'),
      chart: chartSchema,
      traffic: trafficSchema,
      loadBalancer: loadBalancerSchema,
      health: healthSchema,
      rollout: rolloutSchema.prefault({}),
      envoy: envoySettingsSchema.prefault({}),
      drain: drainSchema.prefault({}),
      observability: observabilitySchema.prefault({}),
      registry: z.array(registrySchema).default([]),
    }),
  })
  .superRefine((doc, ctx) => {
    const { spec } = doc;
    if (spec.health.exposure === 'hostPort' && spec.replicas > spec.nodes) {
      ctx.addIssue({ code: 'custom', path: ['spec', 'replicas'], message: `hostPort allows one pod per node: replicas (${spec.replicas}) cannot exceed nodes (${spec.nodes})` });
    }
    if (spec.rollout.maxSurge === 0 && spec.rollout.maxUnavailable === 0) {
      ctx.addIssue({ code: 'custom', path: ['spec', 'rollout', 'maxUnavailable'], message: "'maxSurge' and 'maxUnavailable' cannot both be 0 (Kubernetes rejects it)" });
    }
    const ports = { 'health.port': spec.health.port, 'health.controlPort': spec.health.controlPort };
    for (const [name, value] of Object.entries(ports)) {
      if (spec.observability.metricsPort === value) ctx.addIssue({ code: 'custom', path: ['spec', 'observability', 'metricsPort'], message: `metricsPort ${value} is also spec.${name}` });
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

export type GatewaySpecInput = z.input<typeof gatewaySpecSchema>;
export type GatewaySpec = z.output<typeof gatewaySpecSchema>;
export type HealthSpec = GatewaySpec['spec']['health'];
export type ObservabilitySpec = GatewaySpec['spec']['observability'];

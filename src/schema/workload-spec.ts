import { z } from 'zod';
import { DNS_LABEL, duration, nodeCount, replicaCount, rolloutSchema } from '../model/spec-fields';

/**
 * The GracefulWorkload spec: an application Deployment or StatefulSet behind a Service. Its pods
 * leave service by two races (docs/facts.md §9): the network path (EndpointSlice → kube-proxy or
 * a proxy → rules updated) against the process path (preStop, SIGTERM, the app's shutdown), under
 * the SIGKILL timer. The spec says what gracegate cannot see: how long requests run, how the app
 * shuts down, which path takes the pod out of traffic, and what the cluster and image can run.
 */

const workloadSchema = z.strictObject({
  /** Which controller owns the pods. @default Deployment. */
  kind: z.enum(['Deployment', 'StatefulSet']).default('Deployment').describe('Deployment (default) or StatefulSet; the object is named metadata.name'),
  /** The app container. @default - the pod's only container (an error at delivery when there are several). */
  container: z
    .string()
    .regex(DNS_LABEL, 'must be a DNS label (lower case, digits, -)')
    .optional()
    .describe("the app container's name; default: the pod's only container"),
  /** The pods' labels (the workload's selector), for the PodDisruptionBudget and anti-affinity. @default - app: <metadata.name>. */
  selectorLabels: z.record(z.string().min(1), z.string()).optional().describe("the workload's spec.selector.matchLabels; default app: <metadata.name>"),
});

const trafficSchema = z.strictObject({
  /** The long-request p99, as for a gateway: the longest requests' p99 in seconds. */
  longRequestP99Seconds: duration.refine((s) => s > 0, 'must be above 0').describe('p99 of the longest requests the app serves, seconds'),
  /** The longest request the app must finish. @default - ceil(1.2 x longRequestP99Seconds). */
  maxRequestSeconds: duration.optional().describe('the longest request that must finish during a shutdown; default ceil(1.2 x longRequestP99Seconds)'),
});

/** How the app's shutdown timeout is written: `40` (seconds) or `40s` (a Go / Spring style duration). */
const timeoutFormat = z.enum(['seconds', 'duration']).default('seconds').describe("seconds: '40'; duration: '40s'");

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FLAG_NAME = /^--?[A-Za-z0-9][-A-Za-z0-9_.]*$/;

const shutdownTimeoutSchema = z.discriminatedUnion('via', [
  z.strictObject({
    via: z.literal('env'),
    name: z.string().regex(ENV_NAME, 'must be an environment variable name').describe('the variable the app reads, e.g. SHUTDOWN_TIMEOUT_SEC'),
    format: timeoutFormat,
  }),
  z.strictObject({
    via: z.literal('flag'),
    name: z
      .string()
      .regex(FLAG_NAME, "must be a flag such as '--shutdown-timeout'")
      .describe('the flag the app takes, e.g. --shutdown-timeout; written as --flag=value in args'),
    format: timeoutFormat,
  }),
  z.strictObject({
    via: z.literal('fixed'),
    seconds: duration.describe("the app's own timeout, which gracegate cannot change"),
  }),
]);

const appSchema = z.strictObject({
  /**
   * On SIGTERM the app stops accepting, finishes the requests in flight and exits (Go
   * http.Server.Shutdown, Node server.close). false: SIGTERM kills it at once.
   */
  gracefulShutdown: z.boolean().describe('true: on SIGTERM the app stops accepting, finishes in-flight requests, then exits'),
  /** How the app's shutdown timeout is set. Omitted: not configurable, value unknown. */
  shutdownTimeout: shutdownTimeoutSchema.optional().describe("env / flag: gracegate sets it; fixed: the app's own value; omitted: unknown"),
});

const trafficPathSchema = z.discriminatedUnion('via', [
  z.strictObject({
    /** The Service's ClusterIP through kube-proxy (iptables, IPVS or nftables rules on every node). */
    via: z.literal('kube-proxy'),
    mode: z.enum(['iptables', 'ipvs', 'nftables']).default('iptables').describe("kube-proxy's mode (informational: all follow the same EndpointSlice watch)"),
    /** Seconds from the pod's deletion until no node sends it a new connection. @default 4. */
    propagationDelay: duration
      .optional()
      .describe('seconds from the deletion until no new connection reaches the pod; default 4 (kube-proxy, docs/facts.md §9)'),
  }),
  z.strictObject({
    /** An Ingress or gateway proxy that sends to the pod IPs it reads from EndpointSlices. */
    via: z.literal('ingress'),
    controller: z.string().min(1).optional().describe('which proxy (informational), e.g. ingress-nginx, istio'),
    propagationDelay: duration.optional().describe("seconds until the proxy stops choosing the pod; default 4, kube-proxy's (measure yours)"),
  }),
  z.strictObject({
    /** An LB outside the cluster with instance (node) targets, through a NodePort / LoadBalancer Service. */
    via: z.literal('external-lb'),
    externalTrafficPolicy: z.enum(['Cluster', 'Local']).default('Cluster').describe("the Service's externalTrafficPolicy"),
    healthCheckInterval: duration.optional().describe("the LB's health check interval (needed with Local)"),
    unhealthyThreshold: z.int().min(1).optional().describe('failed checks before the LB takes a node out (needed with Local)'),
    propagationDelay: duration.optional().describe('seconds until no new connection reaches the pod; default from the policy (docs/workloads.md)'),
  }),
]);

const imageSchema = z.strictObject({
  /** No shell and no `sleep` binary in the image (distroless, scratch): a preStop `exec` has nothing to run. */
  distroless: z.boolean().describe('true: the image has no shell and no sleep binary (distroless, scratch)'),
});

const terminationSchema = z.strictObject({
  /** Seconds the preStop waits beyond the propagation delay. @default 1. */
  preStopMargin: duration.default(1).describe('seconds the preStop waits beyond the propagation delay; default 1'),
  /** Seconds left after the app's shutdown timeout for it to exit before SIGKILL. @default 5. */
  exitMargin: duration.default(5).describe("seconds after the app's shutdown timeout before SIGKILL; default 5"),
  preStopSeconds: z.int().min(0).optional().describe('override the planned preStop (whole seconds)'),
  shutdownTimeoutSeconds: z.int().min(1).optional().describe('override the planned app shutdown timeout (whole seconds)'),
  terminationGracePeriodSeconds: z.int().min(0).optional().describe('override the planned grace period (whole seconds)'),
});

const KUBERNETES_VERSION = /^v?1\.(\d+)(\.\d+)?$/;

export const workloadSpecSchema = z
  .strictObject({
    apiVersion: z.literal('gracegate.dev/v1alpha1'),
    kind: z.literal('GracefulWorkload'),
    metadata: z.strictObject({
      name: z.string().regex(DNS_LABEL, 'must be a DNS label (lower case, digits, -)').max(63).describe('the Deployment / StatefulSet name'),
      namespace: z.string().regex(DNS_LABEL, 'must be a DNS label (lower case, digits, -)').max(63).default('default'),
    }),
    spec: z.strictObject({
      workload: workloadSchema.prefault({}),
      replicas: replicaCount().describe('replicas of the workload'),
      /** Nodes the pods may run on: only needed for required anti-affinity (the surge deadlock). */
      nodes: nodeCount().optional().describe('nodes the pods may run on; needed with antiAffinity required'),
      kubernetesVersion: z
        .string()
        .regex(KUBERNETES_VERSION, 'must look like 1.31')
        .describe("the cluster's Kubernetes version: the native sleep preStop action needs 1.30+"),
      image: imageSchema.optional(),
      traffic: trafficSchema,
      app: appSchema,
      trafficPath: trafficPathSchema.prefault({ via: 'kube-proxy' }),
      rollout: rolloutSchema
        .extend({
          antiAffinity: rolloutSchema.shape.antiAffinity.describe('pod anti-affinity on kubernetes.io/hostname; default none (your scheduling stays yours)'),
        })
        .prefault({}),
      disruptionBudget: z.boolean().default(true).describe('emit a PodDisruptionBudget (maxUnavailable 1) when replicas >= 2; default true'),
      termination: terminationSchema.prefault({}),
    }),
  })
  .superRefine((doc, ctx) => {
    const { spec } = doc;
    if (spec.rollout.maxSurge === 0 && spec.rollout.maxUnavailable === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['spec', 'rollout', 'maxUnavailable'],
        message: "'maxSurge' and 'maxUnavailable' cannot both be 0 (Kubernetes rejects it)",
      });
    }
    if (spec.workload.kind === 'StatefulSet' && spec.rollout.maxSurge !== undefined && spec.rollout.maxSurge > 0) {
      ctx.addIssue({ code: 'custom', path: ['spec', 'rollout', 'maxSurge'], message: 'a StatefulSet has no surge: it replaces its pods in place' });
    }
    if (spec.rollout.antiAffinity === 'required' && spec.nodes === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['spec', 'nodes'],
        message: 'required with antiAffinity required (one pod per node: the rollout needs to know the nodes)',
      });
    }
    if (!spec.app.gracefulShutdown && spec.app.shutdownTimeout !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['spec', 'app', 'shutdownTimeout'],
        message: 'an app that exits at SIGTERM (gracefulShutdown false) has no shutdown timeout',
      });
    }
    if (!spec.app.gracefulShutdown && spec.termination.shutdownTimeoutSeconds !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['spec', 'termination', 'shutdownTimeoutSeconds'],
        message: 'an app that exits at SIGTERM (gracefulShutdown false) has no shutdown timeout',
      });
    }
    if (spec.app.shutdownTimeout?.via === 'fixed' && spec.termination.shutdownTimeoutSeconds !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['spec', 'termination', 'shutdownTimeoutSeconds'],
        message: "the app's timeout is fixed (spec.app.shutdownTimeout via fixed): gracegate cannot set it",
      });
    }
    const path = spec.trafficPath;
    if (path.via === 'external-lb' && path.externalTrafficPolicy === 'Local' && path.propagationDelay === undefined) {
      if (path.healthCheckInterval === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['spec', 'trafficPath', 'healthCheckInterval'],
          message: 'required with externalTrafficPolicy Local (or give propagationDelay)',
        });
      if (path.unhealthyThreshold === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['spec', 'trafficPath', 'unhealthyThreshold'],
          message: 'required with externalTrafficPolicy Local (or give propagationDelay)',
        });
    }
    if (spec.traffic.maxRequestSeconds !== undefined && spec.traffic.maxRequestSeconds < spec.traffic.longRequestP99Seconds) {
      ctx.addIssue({
        code: 'custom',
        path: ['spec', 'traffic', 'maxRequestSeconds'],
        message: `must be at least longRequestP99Seconds (${spec.traffic.longRequestP99Seconds})`,
      });
    }
  });

export type WorkloadSpecInput = z.input<typeof workloadSpecSchema>;
export type WorkloadSpec = z.output<typeof workloadSpecSchema>;
export type ShutdownTimeoutSpec = NonNullable<WorkloadSpec['spec']['app']['shutdownTimeout']>;
export type TrafficPathSpec = WorkloadSpec['spec']['trafficPath'];

/** The minor version of `kubernetesVersion` ('1.31' → 31). */
export function kubernetesMinor(version: string): number {
  return Number(KUBERNETES_VERSION.exec(version)![1]);
}

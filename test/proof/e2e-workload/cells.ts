/**
 * The cells: the experiment's eight (short or long requests x neither, graceful only, preStop only,
 * both), each a Deployment written as the experiment's script writes it, and the cells gracegate
 * adds: its plan put into the same Deployment by applyWorkloadChanges, the fixed-sleep
 * alternative, and an exec preStop in a distroless image.
 */
import { planWorkload } from '../../../src/plan/workload/plan-workload';
import { applyWorkloadChanges } from '../../../src/pod/workload/apply';
import type { K8sObject } from '../../../src/pod/k8s';
import { workloadChanges } from '../../../src/pod/workload/pod-changes';
import { resolveWorkloadSpec } from '../../../src/schema/spec-kinds';
import type { WorkloadSpecInput } from '../../../src/schema/workload-spec';

export type Series = 'short' | 'long';

/** How the Deployment controller paces a rollout (docs/facts.md §9). */
export type RolloutPolicy = 'overlap' | 'serialised';

export type Cell = {
  /** S1..S4, L1..L4 as in the experiment; G-* for the cells gracegate adds. */
  id: string;
  series: Series;
  label: string;
  deployment: K8sObject;
  distroless: boolean;
  policy: RolloutPolicy;
};

/** The requests of each series, in the cluster's seconds: the experiment's /slow?ms= lengths and wget timeouts. */
export const SERIES = {
  short: { minMs: 500, maxMs: 500, timeoutMs: 10_000 },
  long: { minMs: 20_000, maxMs: 40_000, timeoutMs: 60_000 },
} as const;

/** The experiment's Deployment (its script's YAML): replicas 2, maxUnavailable 0, maxSurge 1, readiness /health. */
export function experimentDeployment(series: Series, graceful: boolean, preStopSeconds: number | null): K8sObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'demo', namespace: 'graceful-test' },
    spec: {
      replicas: 2,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      selector: { matchLabels: { app: 'demo' } },
      template: {
        metadata: { labels: { app: 'demo' } },
        spec: {
          terminationGracePeriodSeconds: series === 'short' ? 40 : 60,
          containers: [
            {
              name: 'demo',
              image: 'graceful-demo',
              ports: [{ containerPort: 8080 }],
              env: [
                { name: 'GRACEFUL', value: String(graceful) },
                { name: 'SHUTDOWN_TIMEOUT_SEC', value: '55' },
              ],
              readinessProbe: { httpGet: { path: '/health', port: 8080 }, initialDelaySeconds: 2, periodSeconds: 3 },
              ...(preStopSeconds !== null ? { lifecycle: { preStop: { exec: { command: ['sleep', String(preStopSeconds)] } } } } : {}),
            },
          ],
        },
      },
    },
  };
}

/** The GracefulWorkload a team would write for the experiment's app and series. */
export function gracegateSpec(series: Series, graceful = true): WorkloadSpecInput {
  return {
    apiVersion: 'gracegate.dev/v1alpha1',
    kind: 'GracefulWorkload',
    metadata: { name: 'demo', namespace: 'graceful-test' },
    spec: {
      workload: { container: 'demo' },
      replicas: 2,
      kubernetesVersion: '1.31',
      traffic: series === 'short' ? { longRequestP99Seconds: 0.5 } : { longRequestP99Seconds: 39.8, maxRequestSeconds: 40 },
      app: graceful ? { gracefulShutdown: true, shutdownTimeout: { via: 'env', name: 'SHUTDOWN_TIMEOUT_SEC' } } : { gracefulShutdown: false },
      trafficPath: { via: 'kube-proxy' },
    },
  };
}

/** The experiment's Deployment with gracegate's plan applied, exactly as post-render would. */
export function gracegateDeployment(series: Series, graceful = true): K8sObject {
  const plan = planWorkload(resolveWorkloadSpec(gracegateSpec(series, graceful)));
  return applyWorkloadChanges(experimentDeployment(series, graceful, null), workloadChanges(plan));
}

const COMBOS = [
  { n: 1, label: 'neither', graceful: false, preStop: false },
  { n: 2, label: 'graceful only', graceful: true, preStop: false },
  { n: 3, label: 'preStop only (exec sleep 5)', graceful: false, preStop: true },
  { n: 4, label: 'both', graceful: true, preStop: true },
] as const;

/** The experiment's eight cells. */
export function experimentCells(): Cell[] {
  return (['short', 'long'] as const).flatMap((series) =>
    COMBOS.map((c) => ({
      id: `${series === 'short' ? 'S' : 'L'}${c.n}`,
      series,
      label: c.label,
      deployment: experimentDeployment(series, c.graceful, c.preStop ? 5 : null),
      distroless: false,
      policy: 'overlap' as const,
    })),
  );
}

/** gracegate's plan in both series: native sleep, graceful shutdown, computed grace period. */
export function gracegateCells(policy: RolloutPolicy = 'overlap'): Cell[] {
  return (['short', 'long'] as const).map((series) => ({
    id: `G-${series}${policy === 'serialised' ? '-serialised' : ''}`,
    series,
    label: `gracegate's plan${policy === 'serialised' ? ', each rollout step waits for the old pod' : ''}`,
    deployment: gracegateDeployment(series),
    distroless: false,
    policy,
  }));
}

/**
 * The other cells of the report: the fixed-sleep alternative for long requests (a 50 s preStop, no
 * graceful shutdown), gracegate's plan for an app without graceful shutdown, and an exec preStop
 * in a distroless image.
 */
export function extraCells(): Cell[] {
  const fixed = (policy: RolloutPolicy): Cell => ({
    id: `F-long${policy === 'serialised' ? '-serialised' : ''}`,
    series: 'long',
    label: `fixed 50 s preStop instead of graceful shutdown${policy === 'serialised' ? ', each rollout step waits for the old pod' : ''}`,
    deployment: experimentDeployment('long', false, 50),
    distroless: false,
    policy,
  });
  return [
    fixed('overlap'),
    fixed('serialised'),
    {
      id: 'G-long-ungraceful',
      series: 'long',
      label: "gracegate's plan for an app without graceful shutdown",
      deployment: gracegateDeployment('long', false),
      distroless: false,
      policy: 'overlap',
    },
    {
      id: 'D-short',
      series: 'short',
      label: 'S3 in a distroless image',
      deployment: experimentDeployment('short', false, 5),
      distroless: true,
      policy: 'overlap',
    },
  ];
}

/**
 * The few Kubernetes shapes the pod changes are made of, as plain JSON types. Kept local (not
 * cdk8s's generated types, not kubernetes-models) so that `src/pod/` and everything reading it
 * (the post-renderer, the values overlays) load neither cdk8s nor a model library.
 */

export type HttpGetAction = { path: string; port: number | string; scheme: 'HTTP' };

export type Probe = {
  httpGet: HttpGetAction;
  periodSeconds: number;
  timeoutSeconds: number;
  failureThreshold: number;
  successThreshold: number;
};

export type ContainerPort = { name: string; containerPort: number; protocol: 'TCP'; hostPort?: number };

export type VolumeMount = { name: string; mountPath: string; readOnly?: boolean };

export type Container = {
  name: string;
  image: string;
  imagePullPolicy: 'IfNotPresent' | 'Always' | 'Never';
  command: string[];
  /** Downward API values only (the node's addresses for the witness port). */
  env: Array<{ name: string; valueFrom: { fieldRef: { fieldPath: string } } }>;
  ports: ContainerPort[];
  readinessProbe: Probe;
  livenessProbe: Probe;
  /** Native sidecars only: the kubelet starts the next container once this passes. */
  startupProbe?: Probe;
  /** `Always` makes an init container a native sidecar (KEP-753); valid in initContainers only. */
  restartPolicy?: 'Always';
  lifecycle: { preStop: { httpGet: { path: string; port: number; scheme: 'HTTP' } } };
  /** No CPU limit where the pod changes set none (src/pod/pod-changes.ts HC_RESOURCES: a limit throttled the probes' answers). */
  resources: { requests: { cpu: string; memory: string }; limits: { cpu?: string; memory: string } };
  securityContext: {
    runAsNonRoot: true;
    runAsUser: number;
    runAsGroup: number;
    readOnlyRootFilesystem: true;
    allowPrivilegeEscalation: false;
    privileged: false;
    capabilities: { drop: ['ALL'] };
    seccompProfile: { type: 'RuntimeDefault' };
  };
  volumeMounts: VolumeMount[];
  terminationMessagePolicy: 'FallbackToLogsOnError';
};

export type Volume = { name: string; emptyDir: { sizeLimit: string } } | { name: string; configMap: { name: string; defaultMode: number } };

export type LabelSelector = { matchLabels: Record<string, string> } | { matchExpressions: Array<{ key: string; operator: 'Exists' }> };

/**
 * `matchLabelKeys` (Kubernetes 1.29 alpha, beta and on by default from 1.31): the scheduler adds
 * each listed key with the incoming pod's own value to the selector, so one term written for many
 * workloads still selects each workload's own pods.
 */
export type PodAffinityTerm = { labelSelector: LabelSelector; topologyKey: string; matchLabelKeys?: string[] };

export type Affinity = {
  podAntiAffinity:
    | { requiredDuringSchedulingIgnoredDuringExecution: PodAffinityTerm[] }
    | { preferredDuringSchedulingIgnoredDuringExecution: Array<{ weight: number; podAffinityTerm: PodAffinityTerm }> };
};

/** maxUnavailable: a count, or a percentage Kubernetes resolves at the current replica count (rounding down). */
export type DeploymentStrategy = { type: 'RollingUpdate'; rollingUpdate: { maxSurge: number; maxUnavailable: number | string } };

/** One HorizontalPodAutoscaler scaling policy (autoscaling/v2). */
export type HpaScalingPolicy = { type: 'Pods' | 'Percent'; value: number; periodSeconds: number };
export type HpaScalingRules = { stabilizationWindowSeconds?: number; selectPolicy?: 'Max' | 'Min' | 'Disabled'; policies?: HpaScalingPolicy[] };
export type HpaBehavior = { scaleDown?: HpaScalingRules; scaleUp?: HpaScalingRules };

/** A complete Kubernetes object as JSON (apiVersion, kind, metadata, and the rest). */
export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
};

/**
 * The measured default of spec.kubeProxy.propagation: on the test cluster (docs/cluster.md, "The
 * start half of a rollout"; Kubernetes 1.34, kube-proxy at its defaults), the longest time from the
 * kubelet's readiness probe of the sidecar answered to the new pod's node leading its traffic
 * NodePort to the pod, less kube-proxy's minSyncPeriod, rounded up.
 */
export const START_PROPAGATION_SECONDS = 1;

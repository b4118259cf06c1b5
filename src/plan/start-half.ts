/**
 * The start half of a rollout: when the LB may first be told 200 by a new pod (docs/hc.md, "The
 * start hold"; docs/cluster.md, "The start half of a rollout"). The LB sends a node traffic as soon
 * as its probe passes there; the node forwards it to the new pod only once kube-proxy's rules lead
 * there, and until then drops it (externalTrafficPolicy Local, no ready local endpoint). Whether the
 * two can disagree depends on how the probe reaches the pod:
 *   - through the traffic path itself (NLB instance targets: kube-proxy's healthCheckNodePort,
 *     written in the same sync as the rules), or to the pod's IP (no node rule at all): never;
 *   - by a path of its own (a hostPort, a health Service of its own, with a slice of its own that
 *     publishes not-ready addresses): the probe passes as soon as the sidecar says so, so the
 *     sidecar holds its first 200 until the rules can lead to the pod.
 */
import { roundSeconds } from '../core/duration';
import { derived, planInput, specInput, type Derived, type GivenPaths } from '../model/derived';
import type { LbBehaviour } from '../model/lb-behaviour';
import type { GatewaySpec } from '../schema/gateway-spec';

/** How the LB's probe reaches a new pod, against the path its traffic takes. */
export type StartPath = 'pod-ip' | 'traffic-rules' | 'own-path';

export function startPathOf(spec: GatewaySpec, lb: LbBehaviour): { path: StartPath; why: string } {
  if (lb.probesPodIp) return { path: 'pod-ip', why: `the ${lb.model} LB probes and sends to the pod's IP: no node rule lies on its way` };
  if (!lb.probeReachesSidecar)
    return {
      path: 'traffic-rules',
      why: `the ${lb.model} LB probes kube-proxy's healthCheckNodePort, which kube-proxy answers from the same sync that writes the node's rules`,
    };
  const exposure = spec.spec.health.exposure;
  return {
    path: 'own-path',
    why:
      exposure === 'hostPort'
        ? "the LB probes the pod's hostPort, which no Service's rules stand before: its probe can pass before the node's traffic rule leads to the pod"
        : `the LB probes the sidecar through a health Service of its own (exposure ${exposure}, publishing not-ready addresses): its slice and its rules are written apart from the gateway Service's, and lead to a new pod before the pod is ready`,
  };
}

/**
 * How long the sidecar holds its first 200 after the kubelet's readiness probe: the rest of the
 * path to the node's rules where the probe has a path of its own, 0 where it cannot pass before
 * the traffic can.
 */
export function startHold(spec: GatewaySpec, lb: LbBehaviour, given: GivenPaths): Derived {
  const { path, why } = startPathOf(spec, lb);
  if (path !== 'own-path')
    return derived(0, `0: ${why}`, { startPath: { value: path, source: 'plan: how the LB reaches a new pod (spec.health, spec.loadBalancer)' } });
  const k = spec.spec.kubeProxy;
  return derived(roundSeconds(k.minSyncPeriod + k.propagation), 'kubeProxy.minSyncPeriod + kubeProxy.propagation', {
    minSyncPeriod: specInput(
      given,
      'spec.kubeProxy.minSyncPeriod',
      k.minSyncPeriod,
      "kube-proxy's minSyncPeriod, 1 s (pkg/proxy/apis/config/v1alpha1/defaults.go)",
    ),
    propagation: specInput(given, 'spec.kubeProxy.propagation', k.propagation, 'measured on the test cluster (docs/cluster.md, "The start half of a rollout")'),
    startPath: { value: path, source: `plan: ${why}` },
  });
}

/** minReadySeconds covers the start hold and the LB's rise: a rollout takes the next old pod only once the LB sends the new one traffic. */
export function minReadySeconds(hold: Derived, recover: Derived, lbMargin: number, given: GivenPaths): Derived {
  return derived(Math.ceil(hold.value + recover.value + lbMargin), 'ceil(startHoldSeconds + lbRecoverSeconds + lbMargin)', {
    startHoldSeconds: planInput(hold),
    lbRecoverSeconds: planInput(recover),
    lbMargin: specInput(given, 'spec.drain.lbMargin', lbMargin, '6 s, covering probe jitter and a slow probe'),
  });
}

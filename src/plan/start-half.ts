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
import { derived, planInput, specInput, type DerivationInput, type Derived, type GivenPaths } from '../model/derived';
import type { LbBehaviour } from '../model/lb-behaviour';
import type { GatewaySpec, HealthSpec } from '../schema/gateway-spec';
import type { Sequence } from '../contract/hc';
import type { StartPath } from '../loss/start-model';

/**
 * Istio's injected readiness probe of istio-proxy on a gateway (the injection template's
 * readinessPeriodSeconds 15, readinessFailureThreshold 4): once the proxy drain has closed its 15021,
 * the pod stops serving after four failed probes, the first of them 0 to 15 s after the close, so
 * 45 to 60 s later (54.5 and 56.9 s measured on the test cluster: docs/cluster.md, "The drain and
 * istio-proxy's readiness listener"); from then a Service's rules no longer lead to it. The earliest.
 */
export const PROXY_READINESS_GIVE_UP_SECONDS = 45;

/** Where the LB's probe of a node enters the pod, and why there. */
export type HealthProbePlan = {
  /**
   * `gateway-service`: a port of the gateway's own Service (its rules, its slice); `health-service`:
   * a Service of its own, publishing not-ready addresses; `host-port`: the pod's hostPort; `lb`: the
   * LB's own way (the pod's IP, or kube-proxy's healthCheckNodePort), whatever the exposure.
   */
  via: 'gateway-service' | 'health-service' | 'host-port' | 'lb';
  reason: string;
};

/**
 * How long after the proxy drain [3] the LB must still be answered by the sidecar: drain-first
 * answers 200 until in-flight is 0, then 503 for the LB buffer; soft-drain the soft signal until
 * in-flight is 0; health-first has already taken the LB out before it drains.
 */
function answeredAfterDrain(order: Sequence, drainTimeoutSeconds: number, lbBufferSeconds: number): number {
  return order === 'drain-first' ? drainTimeoutSeconds + lbBufferSeconds : order === 'soft-drain' ? drainTimeoutSeconds : 0;
}

/**
 * How long after the proxy drain the LB must hear the sidecar (answeredAfterDrain), and whether a
 * port of the gateway's own Service still reaches the pod that long: below PROXY_READINESS_GIVE_UP_SECONDS.
 */
export function proxyReadinessFit(order: Sequence, drainTimeoutSeconds: number, lbBufferSeconds: number): { after: number; fits: boolean } {
  const after = answeredAfterDrain(order, drainTimeoutSeconds, lbBufferSeconds);
  return { after, fits: after < PROXY_READINESS_GIVE_UP_SECONDS };
}

/**
 * Where the health port goes. With exposure nodePort, on the gateway's own Service by default, so
 * that a new pod's probe passes only through the rules its traffic takes; but a port of that Service
 * reaches the pod only while it is serving, and istio-proxy stops being so once the drain has closed
 * its readiness listener for PROXY_READINESS_GIVE_UP_SECONDS: where the LB must still hear the
 * sidecar longer than that, a health Service of its own (publishing not-ready addresses) and the
 * start hold instead. spec.health.service decides where it is given.
 */
export function healthProbeOf(
  h: HealthSpec,
  lb: Pick<LbBehaviour, 'model' | 'probesPodIp' | 'probeReachesSidecar'>,
  order: Sequence,
  drainTimeoutSeconds: number,
  lbBufferSeconds: number,
): HealthProbePlan {
  if (lb.probesPodIp || !lb.probeReachesSidecar)
    return {
      via: 'lb',
      reason: lb.probesPodIp
        ? `the ${lb.model} LB probes and sends to the pod's IP: no node rule lies on its way`
        : `the ${lb.model} LB probes kube-proxy's healthCheckNodePort, which kube-proxy answers from the same sync that writes the node's rules`,
    };
  if (h.exposure === 'hostPort')
    return { via: 'host-port', reason: "exposure hostPort: the LB probes the pod's hostPort, which no Service's rules stand before" };
  if (h.exposure === 'clusterIP') return { via: 'health-service', reason: 'exposure clusterIP: a ClusterIP health Service for an LB in the cluster' };
  const { after, fits } = proxyReadinessFit(order, drainTimeoutSeconds, lbBufferSeconds);
  const limit = `the LB must hear the sidecar ${after}s after the proxy drain (${order}), and istio-proxy's readiness can give up ${PROXY_READINESS_GIVE_UP_SECONDS}s after it closes its 15021 listener`;
  if (h.service === 'own') return { via: 'health-service', reason: `spec.health.service own (${limit})` };
  if (h.service === 'gateway') return { via: 'gateway-service', reason: `spec.health.service gateway (${limit})` };
  return fits
    ? { via: 'gateway-service', reason: `${limit}: the gateway's own Service carries the health port, one slice and one sync with its traffic` }
    : {
        via: 'health-service',
        reason: `${limit}: a port of the gateway's Service would stop reaching the pod mid-sequence, so a health Service of its own, publishing not-ready addresses, and the start hold`,
      };
}

export function startPathOf(lb: Pick<LbBehaviour, 'probesPodIp'>, probe: HealthProbePlan): { path: StartPath; why: string } {
  if (lb.probesPodIp) return { path: 'pod-ip', why: probe.reason };
  if (probe.via === 'lb') return { path: 'traffic-rules', why: probe.reason };
  if (probe.via === 'gateway-service')
    return {
      path: 'traffic-rules',
      why: "the LB probes the sidecar through a port of the gateway's own Service: its rules lead to a new pod in the same sync as the traffic's",
    };
  return {
    path: 'own-path',
    why:
      probe.via === 'host-port'
        ? "the LB probes the pod's hostPort, which no Service's rules stand before: its probe can pass before the node's traffic rule leads to the pod"
        : "the LB probes the sidecar through a health Service of its own (publishing not-ready addresses): its slice and its rules are written apart from the gateway Service's, and lead to a new pod before the pod is ready",
  };
}

/**
 * How long the sidecar holds its first 200 after the kubelet's readiness probe: the rest of the
 * path to the node's rules where the probe has a path of its own, 0 where it cannot pass before
 * the traffic can.
 */
export function startHold(spec: GatewaySpec, lb: LbBehaviour, given: GivenPaths, probe: HealthProbePlan): Derived {
  const { path, why } = startPathOf(lb, probe);
  if (path !== 'own-path')
    return derived(0, `0: ${why}`, { startPath: { value: path, source: 'plan: how the LB reaches a new pod (spec.health, spec.loadBalancer)' } });
  const rules = rulePath(spec, given);
  return derived(rules.value, rules.formula, { ...rules.inputs, startPath: { value: path, source: `plan: ${why}` } });
}

/** After the kubelet found a pod ready, until a node's rules lead to it: kube-proxy's next sync and the rest of the path. */
function rulePath(spec: GatewaySpec, given: GivenPaths): Derived {
  const k = spec.spec.kubeProxy;
  return derived(roundSeconds(k.minSyncPeriod + k.propagation), 'kubeProxy.minSyncPeriod + kubeProxy.propagation', {
    minSyncPeriod: specInput(
      given,
      'spec.kubeProxy.minSyncPeriod',
      k.minSyncPeriod,
      "kube-proxy's minSyncPeriod, 1 s (pkg/proxy/apis/config/v1alpha1/defaults.go)",
    ),
    propagation: specInput(given, 'spec.kubeProxy.propagation', k.propagation, 'measured on the test cluster (docs/cluster.md, "The start half of a rollout")'),
  });
}

/** How the LB reaches a new pod, as `startHold` derived it (its `startPath` input). */
export function startPathOfHold(hold: Derived): StartPath {
  const path = hold.inputs.startPath?.value;
  if (path !== 'pod-ip' && path !== 'traffic-rules' && path !== 'own-path') throw new Error(`startHoldSeconds without its startPath: ${hold.formula}`);
  return path;
}

/**
 * The Deployment counts a pod available once its Ready condition's lastTransitionTime plus
 * minReadySeconds has passed (pkg/api/v1/pod/util.go, IsPodAvailable), and that time is kept to the
 * whole second (metav1.Time serialises as RFC 3339: k8s.io/apimachinery/pkg/apis/meta/v1/time.go):
 * a pod can count as available up to this much before minReadySeconds have passed since it was Ready.
 */
export const READY_TIME_GRANULARITY_SECONDS = 1;

/**
 * After the pod is Ready, how long until the LB's probe can first pass: the sidecar's start hold
 * where the probe has a path of its own; the node's rules where it passes through the traffic's
 * (they lead to the pod only after kube-proxy's next sync and the propagation); nothing where the
 * LB probes the pod's IP.
 */
function probePasses(spec: GatewaySpec, given: GivenPaths, hold: Derived): { value: number; source: string } {
  const path = startPathOfHold(hold);
  if (path === 'own-path') return { value: hold.value, source: `plan: startHoldSeconds (${hold.formula})` };
  if (path === 'pod-ip') return { value: 0, source: "plan: 0, the LB probes the pod's IP: no node rule stands before it" };
  const rules = rulePath(spec, given);
  const from = Object.values(rules.inputs)
    .map((i) => i.source)
    .join('; ');
  return {
    value: rules.value,
    source: `plan: ${rules.formula} (${from}): the LB's probe passes through the traffic's own rules, which lead to a new pod only after kube-proxy's next sync`,
  };
}

/**
 * minReadySeconds covers the time until the LB's probe can pass, the LB's rise and the margin, and
 * the second the Deployment's clock may take off it: a rollout takes the next old pod only once the
 * LB sends the new one traffic.
 */
export function minReadySeconds(
  spec: GatewaySpec,
  given: GivenPaths,
  hold: Derived,
  recover: Derived,
  lbMargin: number,
  lbMarginInput: DerivationInput,
): Derived {
  const passes = probePasses(spec, given, hold);
  return derived(
    Math.ceil(passes.value + recover.value + lbMargin) + READY_TIME_GRANULARITY_SECONDS,
    'ceil(probePassesSeconds + lbRecoverSeconds + lbMargin) + readyTimeGranularity',
    {
      probePassesSeconds: passes,
      lbRecoverSeconds: planInput(recover),
      lbMargin: lbMarginInput,
      readyTimeGranularity: {
        value: READY_TIME_GRANULARITY_SECONDS,
        source:
          "the Ready condition's lastTransitionTime is kept to the second (metav1.Time, RFC 3339), so the Deployment may count a pod available up to 1 s early (pkg/api/v1/pod/util.go, IsPodAvailable)",
      },
    },
  );
}

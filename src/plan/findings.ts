import { vendorTexts } from '../lb/registry';
import type { GatewaySpec } from '../schema/gateway-spec';
import { connectCutEstimate } from './connect-cut-estimate';
import type { Finding } from './finding';
import type { LbBehaviour } from './lb-behaviour';
import type { Sequence } from './sequence';
import { ISTIO_TERMINATION_DRAIN_SECONDS, type Timings } from './timings';

/** A grace period above this is a sign the p99 is not something a pod termination should wait for. */
export const SANE_GRACE_PERIOD_SECONDS = 600;

type ChartVersion = { major: number; minor: number };

export function chartVersion(version: string): ChartVersion {
  const [major, minor] = version.split('.').map((n) => Number.parseInt(n, 10));
  return { major: major ?? 0, minor: minor ?? 0 };
}

function atLeast(v: ChartVersion, major: number, minor: number): boolean {
  return v.major > major || (v.major === major && v.minor >= minor);
}

/** Traps in the LB, timing and chart setup. Rollout traps come from planRollout. */
export function findTraps(spec: GatewaySpec, lb: LbBehaviour, sequence: Sequence, t: Timings): Finding[] {
  const s = spec.spec;
  const out: Finding[] = [];

  if (sequence === 'drain-first' && lb.resendsRefusedConnections === 'no') {
    out.push({
      id: 'drain-first-without-redispatch',
      severity: 'error',
      field: 'spec.loadBalancer',
      message: `the LB cuts sessions on DOWN and does not re-send refused connections (${lb.resendDetail}): drain-first trades resets for refused connections; measured on HAProxy 2.6: 15 client failures (HTTP 503) instead of 9 resets, each held for its retries (about retries x 1 s) before the 503`,
      remediation: vendorTexts(lb.model).refusedConnectionsFix,
      expectedLoss: 'refused-connections',
    });
  }
  if (sequence === 'drain-first' && lb.resendsRefusedConnections === 'unknown') {
    out.push({
      id: 'drain-first-redispatch-unverified',
      severity: 'warning',
      field: 'spec.loadBalancer',
      message: `drain-first is lossless only if the LB re-sends a refused connection to another backend, and that is ${lb.resendDetail}`,
      remediation: vendorTexts(lb.model).refusedConnectionsFix,
      expectedLoss: 'unknown',
    });
  }
  if (sequence === 'drain-first') {
    out.push({
      id: 'drain-first-cuts-connects-at-down',
      severity: 'info',
      field: 'spec.loadBalancer',
      message:
        'drain-first leaves one race the pod cannot close: until DOWN the LB keeps choosing this pod; the pod refuses each new connection and the LB re-sends it, but a request whose connect is still under way at the instant of DOWN is cut with the flush (the LB kills every session assigned to the backend, connecting ones included). ' +
        `${connectCutEstimate(s.traffic, s.replicas)}; measured on HAProxy 2.6 on loopback (e2e S5, about 25 req/s to the pod): 4 requests cut in 288 runs, 3 of them with both CPUs saturated, more than the round trip alone predicts (the window also holds the LB's own reaction time: read the estimate as a floor)`,
      remediation: `for zero, the LB has to stop choosing the pod before it flushes: ${vendorTexts(lb.model).gracefulAlternative}`,
      expectedLoss: 'cut-connects-at-down',
    });
  }
  if (sequence === 'drain-first' && s.loadBalancer.model === 'haproxy' && !s.loadBalancer.retryOnEmptyResponse) {
    out.push({
      id: 'keepalive-race-not-retried',
      severity: 'info',
      field: 'spec.loadBalancer.retryOnEmptyResponse',
      message:
        "the draining pod closes keep-alive connections (Envoy after its HCM drain_timeout, unannounced), and drain-first has HAProxy still sending until DOWN: a request HAProxy sends on such a connection at that instant gets no answer, and HAProxy closes the client's connection. Browsers, curl and Go retry an idempotent request that fails this way; other clients see an error. Measured on HAProxy 2.6 (e2e S5, 80 runs each way): 5 such failures without retry-on, 0 with it",
      remediation: 'retryOnEmptyResponse: true (retry-on conn-failure empty-response, with http-request disable-l7-retry unless METH_GET: only GET and HEAD are ever sent twice)',
      expectedLoss: 'keepalive-race',
    });
  }
  if (lb.model === 'nlb' && !lb.probeReachesSidecar) {
    out.push({
      id: 'nlb-instance-probe-bypasses-sidecar',
      severity: 'error',
      field: 'spec.loadBalancer.targetType',
      message: "with instance targets and externalTrafficPolicy Local the NLB probes kube-proxy's healthCheckNodePort, which answers from pod readiness, not the sidecar's LB endpoint: the LB signal of this plan never reaches the NLB",
      remediation: 'use targetType ip and point the health check (aws-load-balancer-healthcheck-port/-path) at the sidecar',
      expectedLoss: 'unknown',
    });
  }
  if (lb.model === 'nlb') {
    const nlb = s.loadBalancer as Extract<GatewaySpec['spec']['loadBalancer'], { model: 'nlb' }>;
    if (nlb.deregistrationConnectionTermination && nlb.deregistrationDelay < t.drainTimeoutSeconds) {
      out.push({
        id: 'nlb-deregistration-delay-short',
        severity: 'warning',
        field: 'spec.loadBalancer.deregistrationDelay',
        message: `deregistration delay ${nlb.deregistrationDelay}s is shorter than the drain timeout ${t.drainTimeoutSeconds}s and ends with connection termination: long requests are reset`,
        remediation: `set deregistrationDelay to at least ${t.drainTimeoutSeconds}s`,
        expectedLoss: 'reset-sessions',
      });
    }
  }
  if (lb.model === 'f5' && (s.loadBalancer as { serviceDownAction?: string }).serviceDownAction === 'drop') {
    out.push({
      id: 'f5-service-down-drop',
      severity: 'warning',
      field: 'spec.loadBalancer.serviceDownAction',
      message: 'service-down-action drop silently discards live flows: a client still waiting hangs until its own timeout instead of seeing a reset',
      remediation: 'prefer none (with health-first) or configure recv-disable (soft-drain)',
    });
  }
  if (lb.model === 'citrix' && lb.cutsSessionsOnDown && !lb.gracefulSignal) {
    out.push({
      id: 'citrix-trofs-recommended',
      severity: 'info',
      field: 'spec.loadBalancer.trofsCode',
      message: 'downStateFlush ENABLED without a TROFS code: the plan relies on drain-first',
      remediation: 'ask the LB team for -trofsCode on the monitor (one TROFS monitor per service) so soft-drain applies',
    });
  }
  // An in-mesh Envoy and an NLB with ip targets probe the pod IP; every other LB needs a node port.
  const probesPodIp = lb.model === 'envoy' || (lb.model === 'nlb' && lb.probeReachesSidecar);
  if (s.health.exposure === 'clusterIP' && !probesPodIp) {
    out.push({
      id: 'health-clusterip-unreachable',
      severity: 'error',
      field: 'spec.health.exposure',
      message: `a ${lb.model} LB outside the cluster cannot reach a ClusterIP health Service`,
      remediation: 'use exposure nodePort (with externalTrafficPolicy Local) or hostPort',
    });
  }
  if (s.health.exposure === 'hostPort') {
    out.push({
      id: 'hostport-one-pod-per-node',
      severity: 'info',
      field: 'spec.health.exposure',
      message: `hostPort ${s.health.hostPort ?? s.health.port} allows one gateway pod per node; the rollout plan accounts for it`,
      remediation: 'none needed; use nodePort with externalTrafficPolicy Local if you need more pods than nodes',
    });
  }
  if (t.terminationGracePeriodSeconds > SANE_GRACE_PERIOD_SECONDS) {
    out.push({
      id: 'grace-period-too-long',
      severity: 'warning',
      field: 'spec.traffic.longRequestP99Seconds',
      message: `terminationGracePeriodSeconds ${t.terminationGracePeriodSeconds}s exceeds ${SANE_GRACE_PERIOD_SECONDS}s: every rollout step and node drain waits that long, and a p99 of ${s.traffic.longRequestP99Seconds}s is closer to a stream than a request`,
      remediation: 'move long streams to their own gateway, or let clients reconnect (cap the drain timeout with spec.drain.timeout and accept that longer requests are cut)',
    });
  }
  if (s.drain.timeout !== undefined && s.drain.timeout < s.traffic.longRequestP99Seconds) {
    out.push({
      id: 'drain-timeout-below-p99',
      severity: 'warning',
      field: 'spec.drain.timeout',
      message: `drain timeout ${s.drain.timeout}s is below the long-request p99 ${s.traffic.longRequestP99Seconds}s: more than 1% of long requests will be cut`,
      remediation: `raise spec.drain.timeout to at least ${Math.ceil(1.2 * s.traffic.longRequestP99Seconds)}s or remove it`,
      expectedLoss: 'reset-sessions',
    });
  }
  if (s.chart.kind === 'istio-gateway') {
    const v = chartVersion(s.chart.version);
    if (!atLeast(v, 1, 27)) {
      // Measured on the real schemas: 1.26.8 already takes additionalContainers; what it lacks is
      // `lifecycle` (FACTS.md §5 says both arrived in 1.27), so the sidecar fits but the hold does not.
      out.push({
        id: 'chart-cannot-hold-proxy',
        severity: 'warning',
        field: 'spec.chart.version',
        message: `istio/gateway ${s.chart.version} has no lifecycle value (added in 1.27): a values overlay cannot hold the istio-proxy container until the drain ends, so Envoy would exit ${ISTIO_TERMINATION_DRAIN_SECONDS} s after SIGTERM, mid-sequence`,
        remediation: "deliver with 'gracegate post-render' (Helm --post-renderer or Kustomize), or upgrade the chart to 1.27+",
      });
    }
    if (!atLeast(v, 1, 19)) {
      out.push({
        id: 'chart-no-grace-period',
        severity: 'warning',
        field: 'spec.chart.version',
        message: `istio/gateway ${s.chart.version} cannot set terminationGracePeriodSeconds (added in 1.19): pods get Kubernetes' 30 s`,
        remediation: "use 'gracegate post-render' or upgrade the chart",
      });
    } else if (!atLeast(v, 1, 24)) {
      out.push({
        id: 'chart-no-strategy',
        severity: 'info',
        field: 'spec.chart.version',
        message: `istio/gateway ${s.chart.version} cannot set the Deployment strategy (added in 1.24)`,
        remediation: "use 'gracegate post-render' to set the rollout strategy, or upgrade the chart",
      });
    }
  }
  return out;
}

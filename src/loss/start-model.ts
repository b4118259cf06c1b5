/**
 * The start half of one new pod (docs/simulate.md, "The start half"): the moment the LB takes its
 * node in against the moment the node's traffic rule leads to it. Between the two, the node drops
 * every connection the LB sends there (externalTrafficPolicy Local, no ready local endpoint: the
 * window, docs/cluster.md). Pure, like model.ts: time is a number, the randomness a keyed generator.
 *
 * Times are ms after the kubelet's first readiness probe of the sidecar answered (the pod is ready):
 *   - the traffic rule: the rest of the path (status, EndpointSlice, the rule write: uniform up to
 *     `propagationMs`) plus kube-proxy's wait for its next sync (uniform up to `minSyncMs`; its
 *     BoundedFrequencyRunner syncs at most once a minSyncPeriod);
 *   - the LB's UP: where its probe has a path of its own, the sidecar's first 200 (`holdMs` after the
 *     readiness probe), then the first probe (uniform within a probe period) and the rest of the rise;
 *     where the probe passes through the traffic's rules (or to the pod's IP), never before them.
 */
import { perPodRatePerMs, type Traffic } from './model';

/**
 * How the LB's probe reaches a new pod, against the path its traffic takes (src/plan/start-half.ts
 * decides it): to the pod's IP, through the traffic's own rules, or by a path of its own.
 */
export type StartPath = 'pod-ip' | 'traffic-rules' | 'own-path';

export type StartInputs = {
  path: StartPath;
  /** The sidecar holds its first 200 this long after the kubelet's readiness probe (the plan's startHoldSeconds; 0 unheld). */
  holdMs: number;
  minSyncMs: number;
  propagationMs: number;
  probeIntervalMs: number;
  /** From the first good probe's period to UP, worst case (the plan's lbRecoverSeconds). */
  recoverMs: number;
  /** The LB sends a connect that failed to another pod (its refused-connection fact). */
  redispatch: boolean;
  /** Without that: how long a failed connect holds its client while the LB retries the same node. */
  connectHoldMs: number;
  pods: number;
  traffic: Traffic;
  /** Mean request length, ms: a closed-loop client's rate. */
  meanRequestMs: number;
  connectMs: number;
};

export type ArrivalOutcome = {
  /** The LB's UP before the traffic rule, ms (0 when the rule came first). */
  windowMs: number;
  /** Requests the LB sent the node inside the window. */
  sent: number;
  /** Of those, the ones still dropped when the LB's hold on them ran out, and not sent elsewhere. */
  lost: number;
};

/** Requests per ms the LB gives one pod's node. A closed-loop client stuck on a dropped connect sends nothing more, so this is an upper bound there. */
export function perNodeRatePerMs(i: Pick<StartInputs, 'pods' | 'traffic' | 'meanRequestMs' | 'connectMs'>): number {
  return perPodRatePerMs(i.traffic, i.pods, i.meanRequestMs, i.connectMs);
}

/** One new pod's start: its window and what the LB sent into it. */
export function simulateArrival(i: StartInputs, random: () => number): ArrivalOutcome {
  const rule = random() * i.propagationMs + random() * i.minSyncMs;
  const firstProbe = random() * Math.min(i.probeIntervalMs, i.recoverMs);
  const rise = Math.max(0, i.recoverMs - i.probeIntervalMs);
  // Through the traffic's own rules the probe reaches the pod only once they lead there; to the pod's IP no rule stands between.
  const up = i.path === 'own-path' ? i.holdMs + firstProbe + rise : rule + firstProbe + rise;
  const windowMs = i.path === 'own-path' ? Math.max(0, rule - up) : 0;
  let sent = 0;
  let lost = 0;
  const rate = perNodeRatePerMs(i);
  if (windowMs > 0 && rate > 0) {
    // Poisson arrivals: exponential gaps (-ln(1 - u) / rate, each positive).
    const gap = (): number => -Math.log(1 - random()) / rate;
    for (let t = up + gap(); t < rule; t += gap()) {
      sent += 1;
      if (!i.redispatch && rule - t > i.connectHoldMs) lost += 1;
    }
  }
  return { windowMs, sent, lost };
}

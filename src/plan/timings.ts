import { roundSeconds } from '../core/duration';
import type { Sequence } from '../contract/hc';
import type { GatewaySpec } from '../schema/gateway-spec';
import { derived, planInput, specInput, type Derived, type DerivationInput, type GivenPaths } from '../model/derived';
import type { LbBehaviour } from '../model/lb-behaviour';
import type { StartPath } from '../loss/start-model';
import { healthProbeOf, minReadySeconds, startHold, startPathOfHold } from './start-half';

/** Istio's own default terminationDrainDuration (docs/facts.md §5). */
export const ISTIO_TERMINATION_DRAIN_SECONDS = 5;
/** Istio's own default drainDuration, Envoy's --drain-time-s (docs/facts.md §4). */
export const ISTIO_DRAIN_DURATION_SECONDS = 45;

/** However short the safety margin, the pod outlives the longer of the held sequence and Envoy's drain by this much. */
export const GRACE_FLOOR_MARGIN_SECONDS = 30;

export type Timings = {
  drainTimeoutSeconds: number;
  lbDetectSeconds: number;
  lbBufferSeconds: number;
  terminationDrainDurationSeconds: number;
  terminationGracePeriodSeconds: number;
  /**
   * After SIGTERM the sidecar waits at most this long for Prometheus to scrape its final state
   * (CLOSED, the drain duration, a drain timeout), which would otherwise vanish with the pod.
   */
  finalScrapeWaitSeconds: number;
  /** Upper bound of the whole sequence: how long the preStop hooks hold the pod. */
  sequenceSeconds: number;
  drainDurationSeconds: number;
  pollIntervalSeconds: number;
  /** Seconds the LB needs to send traffic to a new pod again (UP after its probes pass). */
  lbRecoverSeconds: number;
  /**
   * After the kubelet's readiness probe, how long the sidecar still holds the LB's first 200: until
   * the node's rules can lead traffic to the pod, where the LB's probe does not pass through them
   * (src/plan/start-half.ts). 0 where it does.
   */
  startHoldSeconds: number;
  /**
   * Deployment minReadySeconds: a new pod counts as available only once the LB can send it
   * traffic, so a rollout never drains the next old pod while the LB still sees the new one DOWN.
   */
  minReadySeconds: number;
};

export type TimingDerivations = { [K in keyof Timings]: Derived };

/** The order in which people read the timings: the drain, the LB, the pod, then the rollout. */
export const TIMING_ORDER: ReadonlyArray<keyof Timings> = [
  'drainTimeoutSeconds',
  'lbDetectSeconds',
  'lbBufferSeconds',
  'sequenceSeconds',
  'terminationDrainDurationSeconds',
  'finalScrapeWaitSeconds',
  'terminationGracePeriodSeconds',
  'drainDurationSeconds',
  'pollIntervalSeconds',
  'lbRecoverSeconds',
  'startHoldSeconds',
  'minReadySeconds',
];

/**
 * Every timing of the termination, each with its formula and inputs.
 *
 * Design: the proxy container is held by a preStop that waits for the sidecar's sequence to end
 * (the Contour / Envoy Gateway pattern, docs/facts.md §5). Envoy therefore receives SIGTERM only when
 * in-flight is already zero and the LB has moved on, and Istio's short terminationDrainDuration
 * is enough. preStop time counts against the grace period (docs/facts.md §6), so the grace period is
 * the whole sequence plus Envoy's exit plus a safety margin.
 */
export function computeTimings(spec: GatewaySpec, lb: LbBehaviour, given: GivenPaths, order: Sequence, streamWait?: Derived): TimingDerivations {
  const s = spec.spec;
  const p99 = specInput(given, 'spec.traffic.longRequestP99Seconds', s.traffic.longRequestP99Seconds, '');

  const requestTimeout =
    s.drain.timeout !== undefined
      ? derived(s.drain.timeout, 'spec.drain.timeout (override)', {
          timeout: { value: s.drain.timeout, source: 'spec.drain.timeout' },
          longRequestP99Seconds: p99,
        })
      : defaultDrainTimeout(s, p99, given, order === 'drain-first' && lb.reuse.drainFirst ? lb.reuse.detail : undefined);
  // Long-lived streams that rotate (src/plan/long-lived.ts): the drain waits for the rotation too.
  const drainTimeout =
    streamWait !== undefined && s.drain.timeout === undefined && streamWait.value > requestTimeout.value
      ? derived(streamWait.value, `max(${requestTimeout.formula}, longLivedWaitSeconds)`, {
          ...requestTimeout.inputs,
          longLivedWaitSeconds: { value: streamWait.value, source: `plan: ${streamWait.formula} (spec.traffic.longLived)` },
        })
      : requestTimeout;

  const lbDetect = lb.detect;

  const margin = specInput(given, 'spec.drain.lbMargin', s.drain.lbMargin, '6 s, covering probe jitter and a slow probe');
  const detectInput = planInput(lbDetect);
  const probePath: { value: number; formula: string; inputs: Record<string, DerivationInput> } =
    lb.propagation.value > 0
      ? {
          value: lbDetect.value + lb.propagation.value,
          formula: 'lbDetectSeconds + propagationDelay',
          inputs: { lbDetectSeconds: detectInput, propagationDelay: lb.propagation },
        }
      : { value: lbDetect.value, formula: 'lbDetectSeconds', inputs: { lbDetectSeconds: detectInput } };
  // Where a controller also deregisters the target, both ways out start at the pod's deletion: the
  // deregistration first (within seconds, before a failing probe can count), the probe at least
  // lbDetectSeconds later. How the LB treats a target that is both draining and failing is not
  // documented, so the buffer waits for the later of the two to stop new connections.
  const lag = lb.deregistrationLag;
  const lbBuffer = lag
    ? derived(roundSeconds(Math.max(probePath.value, lag.value) + s.drain.lbMargin), `max(${probePath.formula}, deregistrationLag) + lbMargin`, {
        ...probePath.inputs,
        deregistrationLag: lag,
        lbMargin: margin,
      })
    : derived(roundSeconds(probePath.value + s.drain.lbMargin), `${probePath.formula} + lbMargin`, { ...probePath.inputs, lbMargin: margin });

  const sequence = derived(roundSeconds(drainTimeout.value + lbBuffer.value), 'drainTimeoutSeconds + lbBufferSeconds', {
    drainTimeoutSeconds: planInput(drainTimeout),
    lbBufferSeconds: planInput(lbBuffer),
  });

  const tdd = s.envoy.terminationDrainDurationSeconds;
  const terminationDrain =
    tdd !== undefined
      ? derived(tdd, 'spec.envoy.terminationDrainDurationSeconds (override)', {
          terminationDrainDurationSeconds: { value: tdd, source: 'spec.envoy.terminationDrainDurationSeconds' },
        })
      : derived(
          ISTIO_TERMINATION_DRAIN_SECONDS,
          "Istio default: the proxy is held by preStop until in-flight is 0, so Envoy's own drain after SIGTERM has nothing left to finish",
          {
            istioDefault: { value: ISTIO_TERMINATION_DRAIN_SECONDS, source: 'default: Istio terminationDrainDuration 5 s (docs/facts.md §5)' },
          },
        );

  const scraped = s.observability.prometheus !== 'none';
  const finalScrape = scraped
    ? derived(roundSeconds(2 * s.observability.scrapeInterval), '2 x scrapeInterval: one scrape after SIGTERM, one missed scrape tolerated', {
        scrapeInterval: specInput(given, 'spec.observability.scrapeInterval', s.observability.scrapeInterval, '15 s'),
      })
    : derived(0, 'spec.observability.prometheus none: nothing scrapes the sidecar, it exits at SIGTERM', {
        prometheus: { value: 0, source: 'spec.observability.prometheus' },
      });

  // After the sequence both containers get SIGTERM at once: Envoy exits within
  // terminationDrainDuration, the sidecar within finalScrapeWait; the pod lasts the longer.
  const afterSequence = Math.max(terminationDrain.value, finalScrape.value);
  const safety = specInput(given, 'spec.drain.safetyMargin', s.drain.safetyMargin, '30 s safety margin');
  const ours = sequence.value + afterSequence + s.drain.safetyMargin;
  // Whatever safetyMargin says, the pod outlives the longer of the held sequence and Envoy's own
  // drain by 30 s.
  const floorMargin = GRACE_FLOOR_MARGIN_SECONDS;
  const floor = Math.max(drainTimeout.value + lbBuffer.value, terminationDrain.value) + floorMargin;
  const grace = derived(
    Math.ceil(Math.max(ours, floor)),
    'ceil(max(sequenceSeconds + max(terminationDrainDurationSeconds, finalScrapeWaitSeconds) + safetyMargin, max(drainTimeoutSeconds + lbBufferSeconds, terminationDrainDurationSeconds) + floorMargin))',
    {
      sequenceSeconds: planInput(sequence),
      terminationDrainDurationSeconds: planInput(terminationDrain),
      finalScrapeWaitSeconds: planInput(finalScrape),
      safetyMargin: safety,
      drainTimeoutSeconds: planInput(drainTimeout),
      lbBufferSeconds: planInput(lbBuffer),
      floorMargin: {
        value: floorMargin,
        source: "gracegate's floor: the pod outlives the longer of the held sequence and Envoy's own drain by 30 s, whatever safetyMargin says",
      },
    },
  );

  const dd = s.envoy.drainDurationSeconds;
  const drainDuration = derived(
    dd ?? ISTIO_DRAIN_DURATION_SECONDS,
    dd !== undefined
      ? 'spec.envoy.drainDurationSeconds (override)'
      : 'Istio default drainDuration (Envoy --drain-time-s); gracegate stops the listeners itself, so it only bounds a drain started by pilot-agent',
    {
      drainDurationSeconds: specInput(
        given,
        'spec.envoy.drainDurationSeconds',
        dd ?? ISTIO_DRAIN_DURATION_SECONDS,
        'Istio drainDuration 45 s (docs/facts.md §4)',
      ),
    },
  );

  const poll = derived(s.drain.pollInterval, 'spec.drain.pollInterval', {
    pollInterval: specInput(given, 'spec.drain.pollInterval', s.drain.pollInterval, '1 s, as Istio agent and Envoy Gateway poll'),
  });

  const hold = startHold(spec, lb, given, healthProbeOf(spec.spec.health, lb, order, drainTimeout.value, lbBuffer.value));
  const minReady = minReadySeconds(spec, given, hold, lb.recover, s.drain.lbMargin, margin);

  return {
    drainTimeoutSeconds: drainTimeout,
    lbDetectSeconds: lbDetect,
    lbBufferSeconds: lbBuffer,
    terminationDrainDurationSeconds: terminationDrain,
    terminationGracePeriodSeconds: grace,
    finalScrapeWaitSeconds: finalScrape,
    sequenceSeconds: sequence,
    drainDurationSeconds: drainDuration,
    pollIntervalSeconds: poll,
    lbRecoverSeconds: lb.recover,
    startHoldSeconds: hold,
    minReadySeconds: minReady,
  };
}

/** The longest request the plan expects: ceil(1.2 x longRequestP99Seconds), 20 % above the p99. */
export function longestRequestSeconds(longRequestP99Seconds: number, requestsPerConnection = 1): number {
  return Math.ceil(1.2 * requestsPerConnection * longRequestP99Seconds);
}

/**
 * ceil(1.2 x p99), never below two polls (one that still sees the last request, one that sees 0).
 * No floor for idle keep-alive connections: the sidecar counts requests, because no Envoy measured
 * closes an idle connection on a drain (docs/envoy.md), so they are not waited for.
 *
 * drain-first behind an LB that reuses connections to the pod (`reuse` says how) waits for two
 * requests per connection: Envoy closes a kept-alive connection only with the first response it
 * begins after the drain, so a connection whose request was under way at the drain carries one
 * more, served in full (docs/envoy.md, "Drain-first behind an LB that reuses connections"). The
 * other orders drain after the LB has stopped sending, and so does drain-first over a new
 * connection per request.
 */
function defaultDrainTimeout(s: GatewaySpec['spec'], p99: DerivationInput, given: GivenPaths, reuse: string | undefined): Derived {
  const pollInterval = specInput(given, 'spec.drain.pollInterval', s.drain.pollInterval, '1 s');
  const pollFloor = Math.ceil(2 * s.drain.pollInterval);
  if (reuse !== undefined) {
    const requestsPerConnection = 2;
    return derived(
      Math.max(longestRequestSeconds(s.traffic.longRequestP99Seconds, requestsPerConnection), pollFloor),
      'max(ceil(1.2 x requestsPerConnection x longRequestP99Seconds), ceil(2 x pollInterval))',
      {
        requestsPerConnection: {
          value: requestsPerConnection,
          source: `drain-first, and ${reuse}: the request under way at the drain, then one more on its connection (docs/envoy.md)`,
        },
        longRequestP99Seconds: p99,
        pollInterval,
      },
    );
  }
  return derived(
    Math.max(longestRequestSeconds(s.traffic.longRequestP99Seconds), pollFloor),
    'max(ceil(1.2 x longRequestP99Seconds), ceil(2 x pollInterval))',
    {
      longRequestP99Seconds: p99,
      pollInterval,
    },
  );
}

export function timingValues(d: TimingDerivations): Timings {
  return Object.fromEntries(Object.entries(d).map(([k, v]) => [k, v.value])) as Timings;
}

/** An order's timings as the order choice weighs them: the values, and how the LB reaches a new pod with that order's probe. */
export function orderTimings(d: TimingDerivations): Timings & { startPath: StartPath } {
  return { ...timingValues(d), startPath: startPathOfHold(d.startHoldSeconds) };
}

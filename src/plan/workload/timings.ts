import { roundSeconds } from '../../core/duration';
import type { WorkloadSpec } from '../../schema/workload-spec';
import { derived, specInput, type Derived, type DerivationInput, type GivenPaths } from '../../model/derived';
import type { Propagation } from './traffic-path';
import { longestRequestSeconds } from '../timings';

/**
 * The numbers of one pod's termination (docs/facts.md §9). The grace period starts at the deletion
 * and covers the preStop (docs/facts.md §6); SIGTERM comes when the preStop ends; the app then has
 * until the grace period's end before SIGKILL.
 */
export type WorkloadTimings = {
  /** Seconds until no new connection reaches the pod (the network path). */
  propagationDelaySeconds: number;
  /** The longest request the shutdown must let finish. */
  longestRequestSeconds: number;
  /** How long the preStop holds SIGTERM back, so the network path ends first. */
  preStopSeconds: number;
  /** The app's own bound on finishing in-flight requests after SIGTERM (0: it exits at once). */
  shutdownTimeoutSeconds: number;
  terminationGracePeriodSeconds: number;
  /** The longest a pod takes to go, from its deletion: preStop, then the drain. */
  podTerminationSeconds: number;
};

export type WorkloadTimingDerivations = { [K in keyof WorkloadTimings]: Derived };

export const WORKLOAD_TIMING_ORDER: ReadonlyArray<keyof WorkloadTimings> = [
  'propagationDelaySeconds',
  'longestRequestSeconds',
  'preStopSeconds',
  'shutdownTimeoutSeconds',
  'terminationGracePeriodSeconds',
  'podTerminationSeconds',
];

function plan(d: Derived): DerivationInput {
  return { value: d.value, source: `plan: ${d.formula}` };
}

/** Every timing of a workload pod's termination, each with its formula and inputs. */
export function computeWorkloadTimings(spec: WorkloadSpec, propagation: Propagation, given: GivenPaths): WorkloadTimingDerivations {
  const s = spec.spec;
  const t = s.termination;
  const graceful = s.app.gracefulShutdown;
  const p99 = specInput(given, 'spec.traffic.longRequestP99Seconds', s.traffic.longRequestP99Seconds, '');

  const longest =
    s.traffic.maxRequestSeconds !== undefined
      ? derived(s.traffic.maxRequestSeconds, 'spec.traffic.maxRequestSeconds', {
          maxRequestSeconds: { value: s.traffic.maxRequestSeconds, source: 'spec.traffic.maxRequestSeconds' },
          longRequestP99Seconds: p99,
        })
      : // A p99 says 1 % run longer: the same 1.2 x p99 bound a gateway's drain timeout uses.
        derived(longestRequestSeconds(s.traffic.longRequestP99Seconds), 'ceil(1.2 x longRequestP99Seconds)', { longRequestP99Seconds: p99 });

  const delay = propagation.delay;
  const margin = specInput(given, 'spec.termination.preStopMargin', t.preStopMargin, '1 s beyond the propagation delay');
  const gracefulInput = { value: graceful, source: 'spec.app.gracefulShutdown' };
  let preStop: Derived;
  if (t.preStopSeconds !== undefined) {
    preStop = derived(t.preStopSeconds, 'spec.termination.preStopSeconds (override)', {
      preStopSeconds: { value: t.preStopSeconds, source: 'spec.termination.preStopSeconds' },
      propagationDelaySeconds: plan(delay),
    });
  } else if (graceful) {
    // Whole seconds: both the sleep action and `sleep N` take an integer.
    preStop = derived(Math.ceil(roundSeconds(delay.value + t.preStopMargin)), 'ceil(propagationDelaySeconds + preStopMargin)', {
      propagationDelaySeconds: plan(delay),
      preStopMargin: margin,
      gracefulShutdown: gracefulInput,
    });
  } else {
    // The app dies at SIGTERM: the preStop must also outlast a request that started just before the
    // network path closed.
    preStop = derived(
      Math.ceil(roundSeconds(delay.value + longest.value + t.preStopMargin)),
      'ceil(propagationDelaySeconds + longestRequestSeconds + preStopMargin): the app exits at SIGTERM, so the wait also covers the requests in flight',
      {
        propagationDelaySeconds: plan(delay),
        longestRequestSeconds: plan(longest),
        preStopMargin: margin,
        gracefulShutdown: gracefulInput,
      },
    );
  }

  const timeout = s.app.shutdownTimeout;
  let shutdown: Derived;
  if (!graceful) {
    shutdown = derived(0, 'the app exits at SIGTERM: nothing waits', { gracefulShutdown: gracefulInput });
  } else if (timeout?.via === 'fixed') {
    shutdown = derived(timeout.seconds, "spec.app.shutdownTimeout.seconds: the app's own timeout", {
      shutdownTimeout: { value: timeout.seconds, source: 'spec.app.shutdownTimeout.seconds' },
    });
  } else if (t.shutdownTimeoutSeconds !== undefined) {
    shutdown = derived(t.shutdownTimeoutSeconds, 'spec.termination.shutdownTimeoutSeconds (override)', {
      shutdownTimeoutSeconds: { value: t.shutdownTimeoutSeconds, source: 'spec.termination.shutdownTimeoutSeconds' },
      longestRequestSeconds: plan(longest),
    });
  } else if (timeout === undefined) {
    shutdown = derived(Math.ceil(longest.value), "ceil(longestRequestSeconds), assumed: the app's timeout is neither known nor settable", {
      longestRequestSeconds: plan(longest),
    });
  } else {
    shutdown = derived(Math.ceil(longest.value), 'ceil(longestRequestSeconds): the app waits for in-flight requests as long as the longest one may run', {
      longestRequestSeconds: plan(longest),
    });
  }

  const exit = specInput(given, 'spec.termination.exitMargin', t.exitMargin, '5 s for the app to exit after its shutdown timeout');
  const grace =
    t.terminationGracePeriodSeconds !== undefined
      ? derived(t.terminationGracePeriodSeconds, 'spec.termination.terminationGracePeriodSeconds (override)', {
          terminationGracePeriodSeconds: { value: t.terminationGracePeriodSeconds, source: 'spec.termination.terminationGracePeriodSeconds' },
        })
      : derived(
          Math.ceil(roundSeconds(preStop.value + shutdown.value + t.exitMargin)),
          'ceil(preStopSeconds + shutdownTimeoutSeconds + exitMargin): the grace period starts before the preStop and counts it',
          {
            preStopSeconds: plan(preStop),
            shutdownTimeoutSeconds: plan(shutdown),
            exitMargin: exit,
          },
        );

  const termination = derived(
    Math.min(grace.value, roundSeconds(preStop.value + shutdown.value)),
    'min(terminationGracePeriodSeconds, preStopSeconds + shutdownTimeoutSeconds): the preStop always, the drain only as long as the last request runs',
    {
      preStopSeconds: plan(preStop),
      shutdownTimeoutSeconds: plan(shutdown),
      terminationGracePeriodSeconds: plan(grace),
    },
  );

  return {
    propagationDelaySeconds: delay,
    longestRequestSeconds: longest,
    preStopSeconds: preStop,
    shutdownTimeoutSeconds: shutdown,
    terminationGracePeriodSeconds: grace,
    podTerminationSeconds: termination,
  };
}

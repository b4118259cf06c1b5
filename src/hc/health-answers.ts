/**
 * What each health endpoint answers in each state: the three parties of docs/facts.md §1 see three
 * different answers. Pure: the state is in memory, so a probe never waits on Envoy.
 */
import { CLOSED, CLOSING, DRAINING, FAULT, OPEN, type Flow, type HcState } from './states';
import type { HealthAnswer } from './types';

export interface SoftSignal {
  readonly status: number;
  readonly body?: string | undefined;
}

/**
 * `/health_check.html`, the LB's probe. drain-first keeps 200 while DRAINING (the proxy refuses new
 * connections and the LB re-sends them; a 503 now would make it flush the in-flight ones);
 * soft-drain answers the soft status until in-flight is 0; everything else that is not OPEN is 503.
 */
export function lbAnswer(state: HcState, flow: Flow | null, soft: SoftSignal): HealthAnswer {
  switch (state) {
    case OPEN:
      return { status: 200, body: state };
    case DRAINING:
      if (flow === 'drain-first') return { status: 200, body: state };
      if (flow === 'soft-drain') return { status: soft.status, body: soft.body ?? state };
      return { status: 503, body: state };
    case CLOSING:
      if (flow === 'soft-drain') return { status: soft.status, body: soft.body ?? state };
      return { status: 503, body: state };
    case CLOSED:
    case FAULT:
      return { status: 503, body: state };
  }
}

/** `/health`, K8s readiness (the EndpointSlice): 200 until the sequence is over, or Envoy is gone. */
export function readinessAnswer(state: HcState): HealthAnswer {
  return { status: state === CLOSED || state === FAULT ? 503 : 200, body: state };
}

/**
 * `/live`, K8s liveness: always 200 while the process answers. Draining is not a reason to restart,
 * and neither is FAULT: restarting the sidecar cannot bring Envoy back, and a liveness loop on a pod
 * whose Envoy is gone would only add preStop runs (contour#4851).
 */
export function livenessAnswer(state: HcState): HealthAnswer {
  return { status: 200, body: state };
}

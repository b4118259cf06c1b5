/**
 * What each health endpoint answers in each state: the three parties of docs/facts.md §1 see three
 * different answers, read from the states' table (STATE_FACTS in src/contract/hc.ts). Pure: the
 * state is in memory, so a probe never waits on Envoy.
 */
import { STATE_FACTS } from '../contract/hc';
import type { Flow, HcState } from './states';
import type { HealthAnswer } from './types';

export interface SoftSignal {
  readonly status: number;
  readonly body?: string | undefined;
}

function plain(verdict: 'pass' | 'fail', state: HcState): HealthAnswer {
  return { status: verdict === 'pass' ? 200 : 503, body: state };
}

/** `/health_check.html`, the LB's probe: the state's verdict for the flow under way. */
export function lbAnswer(state: HcState, flow: Flow | null, soft: SoftSignal): HealthAnswer {
  const lb = STATE_FACTS[state].lb;
  const verdict = typeof lb === 'string' ? lb : flow === null ? 'fail' : lb[flow];
  return verdict === 'soft' ? { status: soft.status, body: soft.body ?? state } : plain(verdict, state);
}

/**
 * `/health`, K8s readiness (the EndpointSlice): 200 from WARMING (Envoy serves) until the sequence
 * is over, or Envoy is gone.
 */
export function readinessAnswer(state: HcState): HealthAnswer {
  return plain(STATE_FACTS[state].readiness, state);
}

/**
 * `/live`, K8s liveness: 200 while the process answers. Draining is not a reason to restart, and
 * neither is FAULT (the table says why).
 */
export function livenessAnswer(state: HcState): HealthAnswer {
  return plain(STATE_FACTS[state].liveness, state);
}

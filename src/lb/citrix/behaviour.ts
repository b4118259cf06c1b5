import { roundSeconds } from '../../core/duration';
import type { CitrixLb } from './schema';
import { derived, specInput, type GivenPaths } from '../../model/derived';
import type { GracefulSignal, LbBehaviour } from '../../model/lb-behaviour';

const P = 'spec.loadBalancer';

const TROFS_DOC = {
  kind: 'vendor-doc',
  ref: 'NetScaler "Graceful shutdown of services": monitor -trofsCode / -trofsString put the service in TROFS (docs.netscaler.com)',
} as const;

/**
 * NetScaler's request retry (AppQoE, docs.netscaler.com "Request retry if back-end server resets TCP
 * connection during connection establishment" and "... resets TCP connection"): with an AppQoE
 * action `-retryOnReset YES -numRetries N` the virtual server load-balances the request to the next
 * service "instead of sending the reset to the client"; without it the client gets the reset.
 */
const REQUEST_RETRY_DOC = {
  kind: 'vendor-doc',
  ref: 'NetScaler request retry (AppQoE retryOnReset, numRetries): docs.netscaler.com, "Request retry if back-end server resets TCP connection during connection establishment" (the current release; the 13.0 pages name only a reset after the request was sent)',
} as const;

/**
 * Citrix NetScaler: after the flip the next probe comes within `interval`, and the service goes
 * DOWN when `retries` consecutive probes fail (`failureRetries 0`), so about interval x retries.
 */
export function citrixBehaviour(lb: CitrixLb, given: GivenPaths): LbBehaviour<CitrixLb['model']> {
  const flush = lb.downStateFlush === 'ENABLED';
  // In TROFS NetScaler keeps honouring persistence while the virtual server's trofsPersistence is
  // ENABLED ("Enable or disable persistence session on TROFS services", docs.netscaler.com).
  const sticky =
    lb.persistenceType !== 'NONE' && lb.trofsPersistence === 'ENABLED'
      ? { stillSends: `clients held by ${lb.persistenceType} persistence (trofsPersistence ENABLED)` }
      : {};
  const lbState = sticky.stillSends ? 'TROFS (no new connections except from persistent clients)' : 'TROFS (no new connections, active ones kept)';
  let gracefulSignal: GracefulSignal | undefined;
  if (lb.trofsCode !== undefined) {
    gracefulSignal = {
      status: lb.trofsCode,
      ...(lb.trofsString ? { body: lb.trofsString } : {}),
      lbState,
      source: `${P}.trofsCode`,
      doc: TROFS_DOC,
      ...sticky,
    };
  } else if (lb.trofsString !== undefined) {
    // A trofsString matches the body of an otherwise passing response, so the status stays UP-coded.
    gracefulSignal = { status: lb.respCode[0]!, body: lb.trofsString, lbState, source: `${P}.trofsString`, doc: TROFS_DOC, ...sticky };
  }
  return {
    model: 'citrix',
    probeIntervalSeconds: lb.interval,
    detect: derived(roundSeconds(lb.interval * lb.retries), 'interval x retries', {
      interval: specInput(given, `${P}.interval`, lb.interval, 'Citrix -interval 5 s (docs/facts.md §3)'),
      retries: specInput(given, `${P}.retries`, lb.retries, 'Citrix -retries 3 (docs/facts.md §3)'),
    }),
    // A DOWN service is probed only every downTime (CTX132937), so each of the successRetries
    // probes that must pass before it is UP again comes a downTime apart; the interval plays no part.
    recover: derived(roundSeconds(lb.downTime * lb.successRetries), 'downTime x successRetries', {
      downTime: specInput(given, `${P}.downTime`, lb.downTime, 'Citrix -downTime 30 s (docs/facts.md §3)'),
      successRetries: specInput(given, `${P}.successRetries`, lb.successRetries, 'Citrix -successRetries 1 (docs/facts.md §3)'),
    }),
    propagation: { value: 0, source: 'Citrix stops sending at DOWN' },
    cutsSessionsOnDown: flush,
    onDown: flush
      ? 'downStateFlush ENABLED: established connections, in-flight requests and the surge queue are flushed (CTX140147)'
      : 'downStateFlush DISABLED: established connections continue',
    onDownSource: { kind: 'vendor-doc', ref: 'NetScaler service -downStateFlush (CTX140147, CTX124710)' },
    refused: {
      value: lb.retryOnReset ? 'resent' : 'failed',
      detail: lb.retryOnReset
        ? `an AppQoE action with retryOnReset YES (numRetries ${lb.retryOnResetCount}) on the virtual server: a connection the pod resets at the SYN is load-balanced to the next service`
        : 'without an AppQoE retryOnReset action, NetScaler forwards the reset of a connection the pod refuses to the client',
      source: REQUEST_RETRY_DOC,
      holdMs: 0,
    },
    resetRequestResent: {
      value: lb.retryOnReset,
      detail: lb.retryOnReset
        ? 'the same AppQoE retryOnReset action re-sends a request whose connection the pod reset after it was sent'
        : 'without an AppQoE retryOnReset action the reset reaches the client',
      source: REQUEST_RETRY_DOC,
    },
    // Connection multiplexing is on by default for HTTP services: after a request NetScaler puts
    // the connection to the pod in its reuse pool, for the same or another client (CTX124713).
    reuse: {
      drainFirst: lb.maxReq !== 1,
      otherOrders: lb.maxReq !== 1,
      detail:
        lb.maxReq === 1
          ? 'maxReq 1: NetScaler opens a new connection to the pod for every request (CTX135155)'
          : `NetScaler reuses its connections to the pod (connection multiplexing, on by default; maxReq ${lb.maxReq === 0 ? '0, unlimited' : lb.maxReq}, CTX124713)`,
      source: { kind: 'vendor-doc', ref: 'NetScaler connection multiplexing (CTX124713) and serviceGroup -maxReq (CTX135155)' },
    },
    ...(gracefulSignal ? { gracefulSignal } : {}),
    probeReachesSidecar: true,
    // Outside the cluster: it needs a node port or host port.
    probesPodIp: false,
  };
}

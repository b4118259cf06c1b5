import { roundSeconds } from '../../core/duration';
import type { HaproxyLb } from './schema';
import { derived, specInput, type GivenPaths } from '../../model/derived';
import type { LbBehaviour } from '../../model/lb-behaviour';

const P = 'spec.loadBalancer';

/** HAProxy waits min(timeout connect, 1 s) before each retry of a failed connect; lb-config sets no timeout connect. */
export const HAPROXY_RETRY_DELAY_MS = 1000;

/** One backend leaving a real HAProxy 2.6 pool under load, every LB setting (docs/facts.md §2, docs/e2e/RESULTS.md). */
const MEASURED_2_6 = { kind: 'measured', ref: 'docs/facts.md §2 and docs/e2e/RESULTS.md (HAProxy 2.6, real Envoy pods under load)' } as const;

/**
 * HAProxy: after the flip the next check comes within `inter`; each further failure within
 * `fastinter` (HAProxy checks faster while a server is transitioning). DOWN after `fall` failures.
 */
export function haproxyBehaviour(lb: HaproxyLb, given: GivenPaths): LbBehaviour<HaproxyLb['model']> {
  const fastinter = lb.fastinter ?? lb.inter;
  const inputs = {
    inter: specInput(given, `${P}.inter`, lb.inter, 'HAProxy inter 2000 ms (docs/facts.md §3)'),
    fall: specInput(given, `${P}.fall`, lb.fall, 'HAProxy fall 3 (docs/facts.md §3)'),
    fastinter: given.has(`${P}.fastinter`)
      ? specInput(given, `${P}.fastinter`, fastinter, '')
      : { value: fastinter, source: 'default: HAProxy fastinter = inter (docs/facts.md §3)' },
  };
  const shutdown = lb.onMarkedDown === 'shutdown-sessions';
  const redispatch = lb.redispatch && lb.retries > 0;
  return {
    model: 'haproxy',
    probeIntervalSeconds: lb.inter,
    detect: derived(roundSeconds(lb.inter + (lb.fall - 1) * fastinter), 'inter + (fall - 1) x fastinter', inputs),
    // A DOWN server is checked every downinter; once one check passes it is transitioning and
    // checked every fastinter until `rise` checks in a row have passed.
    recover: derived(roundSeconds((lb.downinter ?? lb.inter) + (lb.rise - 1) * fastinter), 'downinter + (rise - 1) x fastinter', {
      downinter: given.has(`${P}.downinter`)
        ? specInput(given, `${P}.downinter`, lb.downinter ?? lb.inter, '')
        : { value: lb.inter, source: 'default: HAProxy downinter = inter (docs/facts.md §3)' },
      rise: specInput(given, `${P}.rise`, lb.rise, 'HAProxy rise 2 (docs/facts.md §3)'),
      fastinter: inputs.fastinter,
    }),
    propagation: { value: 0, source: 'HAProxy stops sending at DOWN' },
    cutsSessionsOnDown: shutdown,
    onDown: shutdown ? 'on-marked-down shutdown-sessions: live sessions are killed' : 'on-marked-down none: live sessions continue',
    onDownSource: MEASURED_2_6,
    refused: {
      value: redispatch ? 'resent' : 'failed',
      detail: redispatch
        ? `retries ${lb.retries} + option redispatch: a refused connect is retried on another server`
        : lb.retries > 0
          ? `retries ${lb.retries} without option redispatch: a refused connect is retried on the same server, then HAProxy answers 503 itself`
          : 'retries 0: a refused connect fails at once (HAProxy answers 503)',
      source: MEASURED_2_6,
      // Each retry of a failed connect waits min(timeout connect, 1 s); lb-config sets no timeout connect.
      holdMs: redispatch ? 0 : lb.retries * HAPROXY_RETRY_DELAY_MS,
    },
    resetRequestResent: {
      value: lb.retryOnEmptyResponse,
      detail: lb.retryOnEmptyResponse
        ? 'retry-on conn-failure empty-response: a GET or HEAD that met a connection the pod closed under it is sent again'
        : 'HAProxy retries connects only: a request on a connection the pod reset under it fails (retryOnEmptyResponse false)',
      source: { kind: 'measured', ref: 'docs/e2e/RESULTS.md, the repeats of S5 drain-first with and without retry-on (HAProxy 2.6, real Envoy)' },
    },
    // Omitted, httpServerClose is written by lb-config for drain-first only; true closes after every request whatever the order.
    reuse: {
      drainFirst: lb.httpServerClose === false,
      otherOrders: lb.httpServerClose !== true,
      detail:
        lb.httpServerClose === false
          ? 'HAProxy keeps its connections to the pod alive and reuses them (httpServerClose: false; HAProxy defaults to option http-keep-alive and http-reuse safe)'
          : lb.httpServerClose === true
            ? 'option http-server-close: HAProxy opens a new connection to the pod for every request and reuses none'
            : 'option http-server-close behind drain-first (lb-config writes it): a new connection to the pod for every request; HAProxy keep-alive behind the other orders',
      source: { kind: 'measured', ref: 'docs/envoy.md, drain-first behind an LB that reuses connections (HAProxy 2.6, real Envoy)' },
    },
    ...(lb.disableOn404
      ? {
          gracefulSignal: {
            status: 404,
            lbState: 'NOLB (no new sessions, existing ones continue)',
            source: `${P}.disableOn404`,
            doc: MEASURED_2_6,
          },
        }
      : {}),
    probeReachesSidecar: true,
    // Outside the cluster: it needs a node port or host port.
    probesPodIp: false,
  };
}

import { removeAt, setAt, specPath } from '../../core/fix';
import { EVIDENCE } from '../../model/evidence';
import type { VendorRule } from '../../model/lb-vendor';
import type { HaproxyLb } from './schema';

/** The listener close at drain-first's drain: the plan's picture draws it at [3] (src/emit/plan-svg.ts). */
export const DRAIN_FIRST_LISTENER_CLOSE_RESET: VendorRule<HaproxyLb> = {
  id: 'drain-first-listener-close-reset',
  severity: 'info',
  field: 'spec.loadBalancer.retryOnEmptyResponse',
  // Behind option http-server-close no pooled connection meets a close; what is left is Envoy
  // closing its listen sockets at the drain call while HAProxy still opens connections (measured
  // on real Envoy 1.36.4 and 1.40.0: docs/e2e/RESULTS.md). With httpServerClose: false the
  // keep-alive race finding (keepalive-race-not-retried) already names the same fix.
  check: ({ sequence }, lb) =>
    sequence === 'drain-first' && !lb.retryOnEmptyResponse && lb.httpServerClose !== false
      ? {
          message:
            "drain-first stops the pod's listeners at the drain while HAProxy still sends to the pod until DOWN. A connect HAProxy makes at that instant can complete in the kernel's listen backlog just before Envoy closes the listen socket (Envoy closes listen sockets on a drain, envoyproxy/envoy#8691): the kernel then resets it after HAProxy sent the request, which is not a failed connect, so retries and redispatch do not re-send it, and the client's connection is closed without an answer. How many grows with the rate: at the end-to-end suite's trickle about one termination in thirty lost one, and at several hundred requests a second one termination lost several, all sent in the few ms after the drain (real Envoy behind lb-config's backend; docs/e2e/LOAD.md). Browsers, curl and Go retry an idempotent request that fails this way; other clients see an error. With retry-on, HAProxy retries it itself",
          remediation:
            'retryOnEmptyResponse: true (retry-on conn-failure empty-response, with http-request disable-l7-retry unless METH_GET: only GET and HEAD are ever sent twice)',
          fixes: [{ description: 'retry-on conn-failure empty-response', edits: [setAt(specPath('spec.loadBalancer.retryOnEmptyResponse'), true)] }],
          expectedLoss: 'keepalive-race',
          evidence: EVIDENCE.keepAliveRace,
        }
      : undefined,
};

export const haproxyFindings: VendorRule<HaproxyLb>[] = [
  {
    id: 'keepalive-race-not-retried',
    severity: 'info',
    field: 'spec.loadBalancer.retryOnEmptyResponse',
    // Only where HAProxy reuses connections to the pod: with option http-server-close (what
    // lb-config writes for drain-first unless httpServerClose: false) no request meets a closed one.
    check: ({ sequence }, lb) =>
      sequence === 'drain-first' && !lb.retryOnEmptyResponse && lb.httpServerClose === false
        ? {
            message:
              "HAProxy reuses its connections to the pod (httpServerClose: false), and drain-first has it sending to the pod until DOWN: a request it sends on a connection the pod closes at that instant, unannounced, gets no answer, and HAProxy closes the client's connection (HTTP/1's keep-alive race). Envoy's drain is not what closes them: it announces every close it makes (Connection: close on the first response after the drain) and leaves idle connections open (docs/envoy.md); what is left is an idle close on Envoy's side (the HCM idle_timeout, Istio's IDLE_TIMEOUT, an hour unless set) meeting HAProxy's next request. Browsers, curl and Go retry an idempotent request that fails this way; other clients see an error. With retry-on, HAProxy retries it itself",
            remediation:
              'retryOnEmptyResponse: true (retry-on conn-failure empty-response, with http-request disable-l7-retry unless METH_GET: only GET and HEAD are ever sent twice), or remove httpServerClose: false (no connection to the pod is reused)',
            fixes: [
              { description: 'retry-on conn-failure empty-response', edits: [setAt(specPath('spec.loadBalancer.retryOnEmptyResponse'), true)] },
              {
                description: 'remove httpServerClose: false (HAProxy closes its connection to the pod after each response)',
                edits: [removeAt(specPath('spec.loadBalancer.httpServerClose'))],
              },
            ],
            expectedLoss: 'keepalive-race',
            evidence: EVIDENCE.keepAliveRace,
          }
        : undefined,
  },
  DRAIN_FIRST_LISTENER_CLOSE_RESET,
];

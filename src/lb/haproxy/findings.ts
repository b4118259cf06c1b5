import { removeAt, setAt, specPath } from '../../fix';
import { EVIDENCE } from '../../plan/evidence';
import type { FindingRule } from '../../plan/finding';
import type { HaproxyLb } from './schema';

export const haproxyFindings: FindingRule<[HaproxyLb]>[] = [
  {
    id: 'keepalive-race-not-retried',
    severity: 'info',
    field: 'spec.loadBalancer.retryOnEmptyResponse',
    // Only where HAProxy reuses connections to the pod: with option http-server-close (what
    // lb-config writes for drain-first unless httpServerClose: false) no request meets a closed one.
    check: ({ sequence }, lb) => (sequence === 'drain-first' && !lb.retryOnEmptyResponse && lb.httpServerClose === false ? {
      message:
        "HAProxy reuses its connections to the pod (httpServerClose: false), and drain-first has it sending to the pod until DOWN: a request it sends on a connection the pod closes at that instant, unannounced, gets no answer, and HAProxy closes the client's connection (HTTP/1's keep-alive race). Envoy's drain is not what closes them: it announces every close it makes (Connection: close on the first response after the drain) and leaves idle connections open (docs/envoy.md); what is left is an idle close on Envoy's side (the HCM idle_timeout, Istio's IDLE_TIMEOUT, an hour unless set) meeting HAProxy's next request. Browsers, curl and Go retry an idempotent request that fails this way; other clients see an error. With retry-on, HAProxy retries it itself",
      remediation: 'retryOnEmptyResponse: true (retry-on conn-failure empty-response, with http-request disable-l7-retry unless METH_GET: only GET and HEAD are ever sent twice), or remove httpServerClose: false (no connection to the pod is reused)',
      fixes: [{ description: 'retry-on conn-failure empty-response', edits: [setAt(specPath('spec.loadBalancer.retryOnEmptyResponse'), true)] }, { description: 'remove httpServerClose: false (HAProxy closes its connection to the pod after each response)', edits: [removeAt(specPath('spec.loadBalancer.httpServerClose'))] }],
      expectedLoss: 'keepalive-race',
      evidence: EVIDENCE.keepAliveRace,
    } : undefined),
  },
];

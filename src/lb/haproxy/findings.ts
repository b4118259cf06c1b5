import { setAt, specPath } from '../../fix';
import { EVIDENCE } from '../../plan/evidence';
import type { FindingRule } from '../../plan/finding';
import type { HaproxyLb } from './schema';

export const haproxyFindings: FindingRule<[HaproxyLb]>[] = [
  {
    id: 'keepalive-race-not-retried',
    severity: 'info',
    field: 'spec.loadBalancer.retryOnEmptyResponse',
    check: ({ sequence }, lb) => (sequence === 'drain-first' && !lb.retryOnEmptyResponse ? {
      message:
        "the draining pod closes keep-alive connections (Envoy after its HCM drain_timeout, unannounced), and drain-first has HAProxy still sending until DOWN: a request HAProxy sends on such a connection at that instant gets no answer, and HAProxy closes the client's connection. Browsers, curl and Go retry an idempotent request that fails this way; other clients see an error. With retry-on, HAProxy retries it itself",
      remediation: 'retryOnEmptyResponse: true (retry-on conn-failure empty-response, with http-request disable-l7-retry unless METH_GET: only GET and HEAD are ever sent twice)',
      fixes: [{ description: 'retry-on conn-failure empty-response', edits: [setAt(specPath('spec.loadBalancer.retryOnEmptyResponse'), true)] }],
      expectedLoss: 'keepalive-race',
      evidence: EVIDENCE.keepAliveRace,
    } : undefined),
  },
];

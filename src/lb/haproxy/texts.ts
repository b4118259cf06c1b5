import { setAt, specPath } from '../../core/fix';
import type { VendorFixes, VendorTexts } from '../../model/lb-vendor';
import type { HaproxyLb } from './schema';

const LB = (key: string) => specPath(`spec.loadBalancer.${key}`);

export const haproxyTexts: VendorTexts = {
  gracefulAlternative:
    'disableOn404: true (http-check disable-on-404: soft-drain, NOLB first and DOWN only at zero in-flight), or drop onMarkedDown shutdown-sessions (health-first)',
  refusedConnectionsFix:
    'enable option redispatch (with retries > 0), or http-check disable-on-404 (soft-drain), or drop on-marked-down shutdown-sessions (health-first)',
  connectionReuseFix:
    'remove httpServerClose: false (lb-config then writes option http-server-close for drain-first: a new connection per request, measured on real Envoy behind HAProxy in docs/envoy.md), or disableOn404: true (soft-drain), or drop onMarkedDown shutdown-sessions (health-first)',
};

export const haproxyFixes: VendorFixes<HaproxyLb> = {
  gracefulAlternative: () => [
    { description: 'http-check disable-on-404 (soft-drain)', edits: [setAt(LB('disableOn404'), true)] },
    { description: 'on-marked-down none (health-first)', edits: [setAt(LB('onMarkedDown'), 'none')] },
  ],
  refusedConnectionsFix: (lb) => [
    { description: 'option redispatch with retries', edits: [setAt(LB('redispatch'), true), ...(lb.retries > 0 ? [] : [setAt(LB('retries'), 3)])] },
    { description: 'http-check disable-on-404 (soft-drain)', edits: [setAt(LB('disableOn404'), true)] },
    { description: 'on-marked-down none (health-first)', edits: [setAt(LB('onMarkedDown'), 'none')] },
  ],
};

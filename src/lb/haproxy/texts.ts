import type { VendorTexts } from '../vendor';

export const haproxyTexts: VendorTexts = {
  gracefulAlternative: 'disableOn404: true (http-check disable-on-404: soft-drain, NOLB first and DOWN only at zero in-flight), or drop onMarkedDown shutdown-sessions (health-first)',
  refusedConnectionsFix: 'enable option redispatch (with retries > 0), or http-check disable-on-404 (soft-drain), or drop on-marked-down shutdown-sessions (health-first)',
  connectionReuseFix: 'remove httpServerClose: false (lb-config then writes option http-server-close for drain-first: a new connection per request, measured on real Envoy behind HAProxy in docs/envoy.md), or disableOn404: true (soft-drain), or drop onMarkedDown shutdown-sessions (health-first)',
};

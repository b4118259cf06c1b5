import type { Paths } from '../../../src/verify/load';

/** The cluster's test app (scripts/cluster/go/istio/testapp), behind every gateway. */
export const CLUSTER_APP_PATHS: Paths = {
  slow: (ms) => `/slow?ms=${ms}`,
  stream: (chunks, intervalMs) => `/stream?chunks=${chunks}&intervalMs=${intervalMs}`,
};

/**
 * The istio/gateway charts the cluster installs: the released ones from the fixtures locator, and
 * "1.31" from the Istio source the cluster build fetched (its manifests/charts/gateway).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { machineCache } from './sh';

export function chartDir(version: string): string {
  if (version === '1.31') {
    const root = join(machineCache(), 'cluster');
    const bins = existsSync(root) ? readdirSync(root).filter((d) => d.startsWith('bin-') && !d.endsWith('.partial')) : [];
    for (const b of bins) {
      const dir = join(root, b, 'istio/gateway');
      if (existsSync(dir)) return dir;
    }
    throw new Error('the 1.31 istio/gateway chart comes with the cluster build: run npm run cluster -- up');
  }
  return join(REPO_ROOT, '..', 'shared', 'fixtures', 'istio-gateway-chart', version);
}

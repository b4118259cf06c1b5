/**
 * `node dist/test/proof/cluster/argocd/images-main.js`: imports Argo CD's images and the plugin's
 * into the running cluster's nodes, as argocd.test.ts's set-up does first (importImages skips what
 * a node already holds). scripts/run-tests.js runs it once the cluster is up, beside the plain
 * track, so that the Argo CD file, last in its lane, no longer spends its first seconds on it.
 */
import { ClusterError } from '../sh';
import { argoCdBuilt, importArgoCdImages } from './install';

async function main(): Promise<number> {
  const started = Date.now();
  await importArgoCdImages(argoCdBuilt());
  process.stderr.write(`argocd images: in the nodes after ${Math.round((Date.now() - started) / 1000)} s\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`argocd images: ${err instanceof ClusterError ? err.message : String((err as Error)?.stack ?? err)}\n`);
    process.exit(1);
  },
);

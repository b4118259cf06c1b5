/**
 * `node dist/test/proof/cluster/argocd/images-main.js [BIN_DIR IMAGES_DIR]`: imports Argo CD's
 * images and the plugin's into the running cluster's nodes, as argocd.test.ts's set-up does first
 * (importImages skips what a node already holds). scripts/run-tests.js runs it once the cluster is
 * up, beside the plain track, so that the Argo CD file, last in its lane, no longer spends its
 * first seconds on it; it passes the folders scripts/argocd/build.sh and images.sh printed for it
 * (without them both scripts run here, each returning at once when its output is there).
 */
import { clusterArchives } from '../images';
import { ClusterError } from '../sh';
import { argoCdBuilt, importArgoCdImages, type ArgoCdBuilt } from './install';

async function main(args: string[]): Promise<number> {
  const started = Date.now();
  const [bin, images] = args;
  const built: ArgoCdBuilt = bin && images ? { bin, images: clusterArchives(images) } : argoCdBuilt();
  await importArgoCdImages(built);
  process.stderr.write(`argocd images: in the nodes after ${Math.round((Date.now() - started) / 1000)} s\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`argocd images: ${err instanceof ClusterError ? err.message : String((err as Error)?.stack ?? err)}\n`);
    process.exit(1);
  },
);

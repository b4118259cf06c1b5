/**
 * The images a node's containerd holds, imported from OCI archives (no registry, nothing pulled):
 * the cluster's own (scripts/cluster/images.sh: pause, proxyv2, pilot, coredns, testapp) and
 * gracegate's sidecar image from `npm run image`, under the reference gracegate's manifests name by
 * default. An image already there with the same manifest digest is not imported again.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeLayout } from './layout';
import { dirs } from './layout';
import { ClusterError, run } from './sh';

export type ImageArchive = { ref: string; file: string };

/** The archives images.sh listed in its images.tsv. */
export function clusterArchives(imagesDir: string): ImageArchive[] {
  return readFileSync(join(imagesDir, 'images.tsv'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [ref, file] = l.split('\t');
      return { ref: ref!, file: join(imagesDir, file!) };
    });
}

/** The manifest digest an OCI archive's index names (what containerd records for the image). */
export function archiveDigest(file: string): string {
  const index = JSON.parse(run('tar', ['-xOf', file, './index.json'], { timeoutMs: 30_000 })) as { manifests: Array<{ digest: string }> };
  const digest = index.manifests[0]?.digest;
  if (!digest) throw new ClusterError(`${file}: index.json names no manifest`);
  return digest;
}

function ctrArgs(node: NodeLayout, ...args: string[]): string[] {
  return ['--address', dirs.node(node).containerdSocket, '--namespace', 'k8s.io', ...args];
}

/** ref → digest of what the node's containerd holds. */
export function nodeImages(node: NodeLayout): Map<string, string> {
  const out = run('ctr', ctrArgs(node, 'images', 'ls'), { timeoutMs: 30_000 });
  const map = new Map<string, string>();
  for (const line of out.split('\n').slice(1)) {
    const [ref, , digest] = line.split(/\s+/);
    if (ref && digest) map.set(ref, digest);
  }
  return map;
}

function ctrImport(node: NodeLayout, image: ImageArchive): Promise<void> {
  const colon = image.ref.lastIndexOf(':');
  const base = image.ref.slice(0, colon);
  return new Promise((resolve, reject) => {
    const child = spawn('ctr', ctrArgs(node, 'images', 'import', '--base-name', base, image.file), { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      err += c;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new ClusterError(`ctr import of ${image.ref} into ${node.name} failed (${code}): ${err.trim()}`));
    });
  });
}

/** Imports into `node` every archive it lacks (by ref and digest); resolves when all are there. */
export async function importImages(node: NodeLayout, images: readonly ImageArchive[]): Promise<number> {
  const have = nodeImages(node);
  let imported = 0;
  for (const image of images) {
    if (!existsSync(image.file)) throw new ClusterError(`image archive missing: ${image.file}`);
    if (have.get(image.ref) === archiveDigest(image.file)) continue;
    await ctrImport(node, image);
    imported++;
  }
  return imported;
}

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';

/**
 * Reads an OCI image archive (`oci-archive:`, a tar of an OCI image layout) the way a registry
 * client would: index.json → manifest → config and layers, each blob found by its digest.
 */

export type Descriptor = { mediaType: string; digest: string; size: number; annotations?: Record<string, string> };
export type ImageConfig = {
  architecture: string;
  os: string;
  config: {
    User?: string;
    Entrypoint?: string[];
    Cmd?: string[];
    Env?: string[];
    WorkingDir?: string;
    ExposedPorts?: Record<string, object>;
    Labels?: Record<string, string>;
    Volumes?: Record<string, object>;
  };
  rootfs: { type: string; diff_ids: string[] };
  history?: { created_by?: string; empty_layer?: boolean }[];
};
export type OciImage = {
  layout: string;
  index: { schemaVersion: number; manifests: Descriptor[] };
  manifestDescriptor: Descriptor;
  manifest: { schemaVersion: number; mediaType?: string; config: Descriptor; layers: Descriptor[] };
  config: ImageConfig;
};

/** A layer entry as `tar -tv` shows it: the type/mode string and the path (no leading `./`). */
export type LayerEntry = { mode: string; path: string; link?: string };

export function blobPath(layout: string, digest: string): string {
  const [algorithm, hex] = digest.split(':');
  return join(layout, 'blobs', algorithm!, hex!);
}

/** Unpacks the archive into `dir` (a layout) and reads its one image. */
export function openArchive(archive: string, dir: string): OciImage {
  mkdirSync(dir, { recursive: true });
  const r = spawnSync('tar', ['-xf', archive, '-C', dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tar -xf ${archive}: ${r.stderr}`);
  const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as OciImage['index'];
  if (index.manifests.length !== 1) throw new Error(`${archive}: ${index.manifests.length} manifests, expected one image`);
  const manifestDescriptor = index.manifests[0]!;
  const manifest = JSON.parse(readFileSync(blobPath(dir, manifestDescriptor.digest), 'utf8')) as OciImage['manifest'];
  const config = JSON.parse(readFileSync(blobPath(dir, manifest.config.digest), 'utf8')) as ImageConfig;
  return { layout: dir, index, manifestDescriptor, manifest, config };
}

/** sha256 of a file, or of its gunzipped content. */
export function sha256(path: string, gunzip = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    const input = createReadStream(path);
    const stream = gunzip ? input.pipe(createGunzip()) : input;
    input.on('error', reject);
    stream.on('error', reject);
    stream.on('data', (chunk: Buffer) => hash.update(chunk));
    stream.on('end', () => resolve(`sha256:${hash.digest('hex')}`));
  });
}

/** Every blob the image names exists, has the size its descriptor says and hashes to its digest. */
export async function blobProblems(image: OciImage): Promise<string[]> {
  const problems: string[] = [];
  for (const d of [image.manifestDescriptor, image.manifest.config, ...image.manifest.layers]) {
    const path = blobPath(image.layout, d.digest);
    const size = statSync(path).size;
    if (size !== d.size) problems.push(`${d.digest}: ${size} bytes, descriptor says ${d.size}`);
    const digest = await sha256(path);
    if (digest !== d.digest) problems.push(`${d.digest}: content hashes to ${digest}`);
  }
  const diffIds = await Promise.all(image.manifest.layers.map((l) => sha256(blobPath(image.layout, l.digest), true)));
  if (JSON.stringify(diffIds) !== JSON.stringify(image.config.rootfs.diff_ids)) {
    problems.push(`rootfs.diff_ids ${JSON.stringify(image.config.rootfs.diff_ids)} are not the layers' uncompressed digests ${JSON.stringify(diffIds)}`);
  }
  return problems;
}

/** The entries of one gzipped layer (GNU tar's `-tvz` listing). */
export function layerEntries(image: OciImage, layer: Descriptor): LayerEntry[] {
  const r = spawnSync('tar', ['-tvzf', blobPath(image.layout, layer.digest), '--numeric-owner'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`tar -tvzf ${layer.digest}: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      // "-rw-r--r-- 0/0  166 1970-01-01 00:00 ./etc/passwd" or "lrwxrwxrwx 0/0 0 ... ./bin -> usr/bin"
      const m = /^(\S+)\s+\S+\s+\d+(?:,\s*\d+)?\s+\S+\s+\S+\s+(.*)$/.exec(line);
      if (!m) throw new Error(`unparsed tar line: ${line}`);
      const [path, link] = m[2]!.split(/ -> | link to /);
      return { mode: m[1]!, path: path!.replace(/^\.\//, '').replace(/\/$/, ''), ...(link !== undefined ? { link } : {}) };
    })
    .filter((e) => e.path !== '.' && e.path !== '');
}

/** The image's `Env` as a map. */
export function envOf(config: ImageConfig): Record<string, string> {
  return Object.fromEntries((config.config.Env ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}

/**
 * The images' size and start-up time. Prints a Markdown table.
 *
 * Run: npm run build && npm run image && node dist/bench/image-bench.js [--write]
 * (--write records the tables in docs/benchmarks.json, which docs/images.md renders).
 * Sizes: the OCI archives and their gzip layers (what a node pulls), and the unpacked root
 * filesystem. Start-up: medians of 7 fresh containers run by runc as the pod runs them (read-only
 * root, no capabilities): `gracegate --version` to its exit, and `gracegate hc` from `runc run` to
 * the first 200 from /live; beside the same two from the checkout on the host's node, for the ratio.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runContainer, startContainer, unpack, type Bundle } from '../test/image/container';
import { openArchive } from '../test/image/oci';
import { writeBenchResult } from '../test/support/bench-results';
import { freePort } from '../test/support/ports';

const ROOT = join(__dirname, '..', '..');
const RUNS = 7;
const VERSION = (require(join(ROOT, 'package.json')) as { version: string }).version;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** ms from `start()` to the first 200 from /live on `port` (bounded: 20 s). */
async function timeToLive(port: number, start: () => { stop(): Promise<void> | void }): Promise<number> {
  const t0 = process.hrtime.bigint();
  const handle = start();
  try {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const ok = await fetch(`http://127.0.0.1:${port}/live`, { signal: AbortSignal.timeout(500) }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return Number(process.hrtime.bigint() - t0) / 1e6;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`no /live 200 on ${port} within 20 s`);
  } finally {
    await handle.stop();
  }
}

async function hcLive(bundle: Bundle | null): Promise<number> {
  const [health, control] = [await freePort(), await freePort()];
  const args = ['hc', '--health-port', String(health), '--control-port', String(control), '--envoy-admin', `http://127.0.0.1:${await freePort()}`];
  if (bundle) {
    return timeToLive(health, () => startContainer(bundle, { args: ['gracegate', ...args], hostNetwork: true, tmpfs: ['/var/run/gracegate'] }));
  }
  const state = mkdtempSync(join(tmpdir(), 'gracegate-bench-state-'));
  return timeToLive(health, () => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/gracegate.js'), ...args, '--state-file', join(state, 'state.json')], { stdio: 'ignore' });
    return {
      stop: () => {
        child.kill('SIGKILL');
      },
    };
  });
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'gracegate-image-bench-'));
  try {
    const rows: string[] = [];
    const sidecar = join(ROOT, '.cache/images/gracegate.oci.tar');
    for (const [name, archive] of [
      ['gracegate (sidecar)', sidecar],
      ['gracegate-cmp', join(ROOT, '.cache/images/gracegate-cmp.oci.tar')],
    ] as const) {
      const image = openArchive(archive, join(work, name.replace(/\W/g, '-')));
      const layers = image.manifest.layers.map((l) => (l.size / 2 ** 20).toFixed(1)).join(' + ');
      const b = unpack(image.layout, VERSION, join(work, `${name.replace(/\W/g, '-')}-bundle`));
      const du = spawnSync('du', ['-sm', join(b.dir, 'rootfs')], { encoding: 'utf8' }).stdout.split('\t')[0];
      rows.push(`| ${name} | ${(statSync(archive).size / 2 ** 20).toFixed(1)} MiB | ${layers} MiB | ${du} MiB |`);
    }
    const bundle = unpack(openArchive(sidecar, join(work, 'start')).layout, VERSION, join(work, 'start-bundle'));
    const versionInImage: number[] = [];
    const versionOnHost: number[] = [];
    const liveInImage: number[] = [];
    const liveOnHost: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      versionInImage.push(runContainer(bundle, { args: ['gracegate', '--version'] }).ms);
      const t0 = process.hrtime.bigint();
      spawnSync(process.execPath, [join(ROOT, 'bin/gracegate.js'), '--version']);
      versionOnHost.push(Number(process.hrtime.bigint() - t0) / 1e6);
      liveInImage.push(await hcLive(bundle));
      liveOnHost.push(await hcLive(null));
    }
    const nodeVersion = runContainer(bundle, { args: ['node', '--version'] }).stdout.trim();
    const out = [
      `image ${VERSION}; host node ${process.version}, image node ${nodeVersion}; ${process.platform}/${process.arch}`,
      '',
      '| image | archive | layers (gzip) | root filesystem |',
      '|---|---|---|---|',
      ...rows,
      '',
      `| start-up (median of ${RUNS}, ms) | in the image (runc, read-only root) | checkout on the host | ratio |`,
      '|---|---|---|---|',
      `| \`gracegate --version\`, to exit | ${median(versionInImage).toFixed(0)} | ${median(versionOnHost).toFixed(0)} | ${(median(versionInImage) / median(versionOnHost)).toFixed(2)} |`,
      `| \`gracegate hc\`, to the first /live 200 | ${median(liveInImage).toFixed(0)} | ${median(liveOnHost).toFixed(0)} | ${(median(liveInImage) / median(liveOnHost)).toFixed(2)} |`,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
    if (process.argv.includes('--write')) writeBenchResult('image', 'npm run image && node dist/bench/image-bench.js --write', out.join('\n'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

void main();

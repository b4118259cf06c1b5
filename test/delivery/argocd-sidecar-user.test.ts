/**
 * `gracegate argocd generate` as the CMP sidecar runs it: uid 999, a home it cannot write
 * (readOnlyRootFilesystem), a writable /tmp of its own, and an app whose chart has a dependency from
 * a chart repository that is not built yet, with real helm 3 and helm 4. helm must write that
 * repository's index into a cache; with the cache under the read-only home `helm dependency build`
 * fails ("no cached repository"), so generate gives helm homes in a temporary directory.
 *
 * The chart repository is served by this test on 127.0.0.1 (no network). uid 999 comes from setpriv
 * when the tests run as root, else from an unprivileged user namespace (unshare --map-user).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../support/repo';
import { argoCdEnv } from './argocd-env';
import { requireTool, tempDir, TOOLS } from './tools';

const UID = 999;
const root = tempDir('gracegate-argocd-uid-');
chmodSync(root, 0o755);

/** The command that runs `cmd` as uid/gid 999 with no supplementary groups. */
function as999(cmd: string, args: string[]): [string, string[]] {
  if (process.getuid?.() === 0) return ['setpriv', [`--reuid=${UID}`, `--regid=${UID}`, '--clear-groups', '--', cmd, ...args]];
  return ['unshare', ['--user', `--map-user=${UID}`, `--map-group=${UID}`, '--', cmd, ...args]];
}

/** Owned by uid 999 (as root: chown; in a user namespace the caller's files already map to 999). */
function ownBy999(path: string): void {
  if (process.getuid?.() !== 0) return;
  chownSync(path, UID, UID);
  for (const entry of readdirSync(path, { withFileTypes: true, recursive: true })) chownSync(join(entry.parentPath, entry.name), UID, UID);
}

function runAs999(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const [cmd, argv] = as999(args[0]!, args.slice(1));
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // Argo CD's own bound on a plugin command (ARGOCD_EXEC_TIMEOUT, 90 s).
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

let server: http.Server;
let repoUrl: string;
const home = join(root, 'home');
const tmp = join(root, 'tmp');
const bins: Record<string, string> = {};

before(async () => {
  // The chart repository: the in-house gateway chart, packaged and indexed by helm itself.
  const repo = join(root, 'chart-repo');
  mkdirSync(repo);
  server = http.createServer((req, res) => {
    try {
      res.end(readFileSync(join(repo, (req.url ?? '/').replace(/^\/+/, '').replace(/\.\./g, ''))));
    } catch {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  repoUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const helm3 = requireTool(TOOLS.helm3);
  for (const args of [
    ['package', join(REPO_ROOT, 'charts/gateway-additional-containers'), '-d', repo],
    ['repo', 'index', repo, '--url', repoUrl],
  ]) {
    const r = spawnSync(helm3, args, { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: root } });
    assert.equal(r.status, 0, r.stderr);
  }

  // The sidecar's home: read-only for uid 999 (root-owned 0555, or 0555 on its own files).
  mkdirSync(home, { mode: 0o555 });
  chmodSync(home, 0o555);
  // The sidecar's own /tmp (an emptyDir in plugins/argocd/repo-server-patch.yaml).
  mkdirSync(tmp);
  chmodSync(tmp, 0o1777);
  for (const [name, helm] of [
    ['helm3', TOOLS.helm3],
    ['helm4', TOOLS.helm4],
  ] as const) {
    const bin = join(root, `bin-${name}`);
    mkdirSync(bin);
    // A copy, not a link: the tools live in the machine's cache (scripts/cache-dir.sh), under a
    // home uid 999 may not enter.
    copyFileSync(requireTool(helm), join(bin, 'helm'));
    chmodSync(join(bin, 'helm'), 0o755);
    symlinkSync(process.execPath, join(bin, 'node'));
    bins[name] = bin;
  }
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A fresh copy of the app as the CMP server extracts it: owned by the sidecar's user. */
function app(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'gracegate.yaml'),
    readFileSync(join(REPO_ROOT, 'examples/haproxy.yaml'), 'utf8').replace('kind: istio-gateway ', 'kind: additional-containers '),
  );
  writeFileSync(
    join(dir, 'Chart.yaml'),
    `apiVersion: v2
name: gateways-public
version: 1.0.0
dependencies:
  - name: gateway-additional-containers
    version: 0.1.0
    repository: ${repoUrl}
`,
  );
  ownBy999(dir);
  return dir;
}

function sidecarEnv(bin: string): NodeJS.ProcessEnv {
  return {
    PATH: `${bin}:/usr/bin:/bin`,
    HOME: home,
    TMPDIR: tmp,
    NO_PROXY: '127.0.0.1',
    ARGOCD_APP_NAME: 'igw-public',
    ARGOCD_APP_NAMESPACE: 'istio-ingress',
    ARGOCD_APP_REVISION: '0123456789abcdef0123456789abcdef01234567',
    ARGOCD_APP_SOURCE_PATH: '.',
    KUBE_VERSION: '1.31.9',
    ...argoCdEnv({}),
  };
}

describe('argocd generate as uid 999 with a read-only home', () => {
  test('the home really is read-only for uid 999, and /tmp is writable', async () => {
    const probe =
      "const fs=require('fs');for(const d of [process.env.HOME,process.env.TMPDIR]){try{fs.writeFileSync(d+'/probe','x');fs.unlinkSync(d+'/probe');console.log(d+' writable')}catch(e){console.log(d+' '+e.code)}}";
    const r = await runAs999([process.execPath, '-e', probe], sidecarEnv(bins['helm3']!), root);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`${home} EACCES`));
    assert.match(r.stdout, new RegExp(`${tmp} writable`));
    const id = await runAs999(['/usr/bin/id', '-u'], {}, root);
    assert.equal(id.stdout.trim(), String(UID));
  });

  for (const name of ['helm3', 'helm4'] as const) {
    test(`${name}: the chart's dependency is built and the gateway rendered and injected`, async () => {
      const dir = app(`app-${name}`);
      const r = await runAs999([process.execPath, join(REPO_ROOT, 'bin/gracegate.js'), 'argocd', 'generate'], sidecarEnv(bins[name]!), dir);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, /dependencies are not built: .*helm dependency build \./);
      const objects = parseAllDocuments(r.stdout)
        .map((d) => d.toJS())
        .filter((o) => o !== null);
      const dep = objects.find((o) => o.kind === 'Deployment');
      assert.deepEqual(
        dep.spec.template.spec.containers.map((c: { name: string }) => c.name),
        ['istio-proxy', 'gracegate-hc'],
      );
      assert.deepEqual(readdirSync(join(dir, 'charts')), ['gateway-additional-containers-0.1.0.tgz']);
      assert.deepEqual(readdirSync(home), [], 'nothing written to the home');
      assert.deepEqual(readdirSync(tmp), [], 'the temporary helm homes are removed');
    });
  }
});

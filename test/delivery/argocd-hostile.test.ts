/**
 * A hostile tenant of a shared Argo CD (issue 46): whoever writes an Application controls the
 * plugin's parameters, its ARGOCD_ENV_* entries and its repository's content. Each attack found on
 * `gracegate argocd generate` (run as argocd-cmp-server runs it, helm 3.17 as in the plugin image) is
 * a case here: the parameter is refused before anything runs, exit 2, the message naming it, nothing
 * on stdout, and the attack's witness (a file the shell would write, a secret's text, a request to a
 * server) absent.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { REPO_ROOT } from '../support/repo';
import { argoCdRig, objects } from './argocd-rig';
import type { RunResult } from './tools';

const rig = argoCdRig('gracegate-argocd-hostile-');
const { tmp, repo, generate } = rig;
const SPEC = readFileSync(join(REPO_ROOT, 'examples/haproxy.yaml'), 'utf8');
const RENDERED = readFileSync(join(REPO_ROOT, 'test/delivery/post-render/fixtures/rendered-1.26-like.yaml'), 'utf8');

/** Another tenant's file on the same repo server, outside this Application's checkout. */
const SECRET_TEXT = 'another-tenants-secret-7f3a';
const OUTSIDE = join(tmp, 'other-tenant');
mkdirSync(OUTSIDE, { recursive: true });
writeFileSync(join(OUTSIDE, 'secret.yaml'), `x: ${SECRET_TEXT}\n`);
writeFileSync(join(OUTSIDE, 'gracegate.yaml'), SPEC);
writeFileSync(join(OUTSIDE, 'rendered.yaml'), RENDERED);
cpSync(join(REPO_ROOT, 'test/fixtures/charts/istio-gateway-1.26-like'), join(OUTSIDE, 'chart'), { recursive: true });

/**
 * The tenant's own chart: the gateway as rendered (its names fixed, whatever the release), and a
 * ConfigMap whose one line a shell would run, and which prints `.Values.x`.
 */
function tenantChart(marker: string): Record<string, string> {
  return {
    'app/gracegate.yaml': SPEC,
    'app/chart/Chart.yaml': 'apiVersion: v2\nname: tenant\nversion: 0.1.0\n',
    'app/chart/values.yaml': '{}\n',
    'app/chart/templates/gateway.yaml': RENDERED,
    'app/chart/templates/tenant.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tenant\n  namespace: istio-ingress\ndata:\n  run: 1; echo pwned > ${marker} #\n  leak: {{ .Values.x | default "" | quote }}\n`,
  };
}

/** Refused: exit 2, nothing on stdout, the message matching `words`, no stack trace. */
function assertRefused(r: RunResult, words: RegExp, what: string): void {
  assert.equal(r.status, 2, `${what}: exit ${r.status}; stderr: ${r.stderr}; stdout: ${r.stdout.slice(0, 300)}`);
  assert.equal(r.stdout, '', `${what}: nothing on stdout`);
  assert.match(r.stderr, words, what);
  assert.doesNotMatch(r.stderr, /\n\s+at .+:\d+:\d+\)?\n/, `${what}: no stack trace`);
}

const params = (list: Array<{ name: string; string?: unknown; array?: unknown; map?: unknown }>) => ({ ARGOCD_APP_PARAMETERS: JSON.stringify(list) });

test('1. command execution: a release name or chart that is a helm flag (--post-renderer=/bin/sh) is refused before helm runs; the shell line never runs', () => {
  const marker = join(tmp, 'pwned-1');
  const root = repo('repo-exec', tenantChart(marker));
  const app = join(root, 'app');
  const attempts: Array<[string, NodeJS.ProcessEnv, RegExp]> = [
    [
      'release-name',
      params([
        { name: 'chart', string: 'chart' },
        { name: 'release-name', string: '--post-renderer=/bin/sh' },
      ]),
      /plugin parameter 'release-name' is "--post-renderer=\/bin\/sh", not a helm release name/,
    ],
    [
      'ARGOCD_ENV_GRACEGATE_RELEASE_NAME',
      { PARAM_CHART: 'chart', ARGOCD_ENV_GRACEGATE_RELEASE_NAME: '--post-renderer=/bin/sh' },
      /plugin parameter 'release-name' is "--post-renderer=\/bin\/sh"/,
    ],
    [
      'chart',
      params([{ name: 'chart', string: '--post-renderer=/bin/sh' }]),
      /plugin parameter 'chart' '--post-renderer=\/bin\/sh': no such file in the repository/,
    ],
    ['ARGOCD_ENV_GRACEGATE_CHART', { ARGOCD_ENV_GRACEGATE_CHART: '--post-renderer=/bin/sh' }, /plugin parameter 'chart' '--post-renderer=\/bin\/sh'/],
  ];
  for (const [what, env, words] of attempts) {
    const r = generate(app, env);
    assertRefused(r, words, what);
    assert.equal(existsSync(marker), false, `${what}: the tenant's shell line ran (${marker} exists)`);
  }
});

test("2. any file read: --set-file as a release name is refused; the other tenant's file is in neither output", () => {
  const root = repo('repo-read', tenantChart(join(tmp, 'pwned-2')));
  for (const env of [
    params([
      { name: 'chart', string: 'chart' },
      { name: 'release-name', string: `--set-file=x=${join(OUTSIDE, 'secret.yaml')}` },
    ]),
    { PARAM_CHART: 'chart', ARGOCD_ENV_GRACEGATE_RELEASE_NAME: `--set-file=x=${join(OUTSIDE, 'secret.yaml')}` },
  ]) {
    const r = generate(join(root, 'app'), env);
    assertRefused(r, /plugin parameter 'release-name' is "--set-file=x=.*", not a helm release name/, 'release-name --set-file');
    assert.doesNotMatch(r.stdout + r.stderr, new RegExp(SECRET_TEXT));
  }
  // The same chart with a release name helm accepts renders: the refusal is the parameter's.
  const ok = generate(
    join(root, 'app'),
    params([
      { name: 'chart', string: 'chart' },
      { name: 'release-name', string: 'igw-public' },
    ]),
  );
  assert.equal(ok.status, 0, ok.stderr);
});

test('3. paths outside the repository: ../, absolute paths (taken from the repository root, as Argo CD does), links that leave it, and URLs are refused for spec, chart, values-files and rendered', () => {
  const root = repo(
    'repo-paths',
    { 'app/gracegate.yaml': SPEC, 'app/values.yaml': 'autoscaling:\n  enabled: false\n', 'app/rendered.yaml': RENDERED },
    { 'app/chart': 'test/fixtures/charts/istio-gateway-1.26-like' },
  );
  const app = join(root, 'app');
  symlinkSync(join(OUTSIDE, 'secret.yaml'), join(app, 'linked-values.yaml'));
  symlinkSync(join(OUTSIDE, 'chart'), join(app, 'linked-chart'));
  symlinkSync(join(OUTSIDE, 'gracegate.yaml'), join(app, 'linked-spec.yaml'));
  // A link inside the tenant's own chart, to another tenant's file (helm follows links in a chart).
  cpSync(join(app, 'chart'), join(app, 'leaky-chart'), { recursive: true });
  symlinkSync(join(OUTSIDE, 'secret.yaml'), join(app, 'leaky-chart/templates/leak.yaml'));
  const chart = { name: 'chart', string: 'chart' };
  const values = (file: string) => params([chart, { name: 'values-files', array: ['values.yaml', file] }]);
  const cases: Array<[string, NodeJS.ProcessEnv, RegExp]> = [
    [
      'values-files ../',
      values(`../../other-tenant/secret.yaml`),
      /plugin parameter 'values-files'\[1\] '\.\.\/\.\.\/other-tenant\/secret\.yaml' resolves outside the repository/,
    ],
    ['values-files absolute', values(join(OUTSIDE, 'secret.yaml')), /plugin parameter 'values-files'\[1\] '.*secret\.yaml': no such file in the repository/],
    ['values-files /etc/passwd', values('/etc/passwd'), /plugin parameter 'values-files'\[1\] '\/etc\/passwd': no such file in the repository/],
    [
      'values-files link',
      values('linked-values.yaml'),
      /plugin parameter 'values-files'\[1\] 'linked-values\.yaml' resolves outside the repository \(through a symbolic link\)/,
    ],
    [
      'values-files URL',
      values('http://127.0.0.1:9/values.yaml'),
      /the URL scheme 'http' is not allowed; the operator allows schemes with GRACEGATE_VALUES_FILE_SCHEMES/,
    ],
    [
      'chart ../',
      params([{ name: 'chart', string: '../../other-tenant/chart' }]),
      /plugin parameter 'chart' '\.\.\/\.\.\/other-tenant\/chart' resolves outside the repository/,
    ],
    ['chart link', params([{ name: 'chart', string: 'linked-chart' }]), /plugin parameter 'chart' 'linked-chart' resolves outside the repository/],
    [
      'chart with a link out',
      params([{ name: 'chart', string: 'leaky-chart' }]),
      /the chart 'leaky-chart': leaky-chart\/templates\/leak\.yaml is a symbolic link that leaves the repository/,
    ],
    [
      'chart URL',
      params([{ name: 'chart', string: 'https://charts.example.com/gateway-1.0.0.tgz' }]),
      /plugin parameter 'chart' 'https:.*' is not a chart directory in the repository, nor a chart the operator allows/,
    ],
    [
      'spec ../',
      { PARAM_CHART: 'chart', PARAM_SPEC: '../../other-tenant/gracegate.yaml' },
      /plugin parameter 'spec' '\.\.\/\.\.\/other-tenant\/gracegate\.yaml' resolves outside the repository/,
    ],
    ['spec link', { PARAM_CHART: 'chart', PARAM_SPEC: 'linked-spec.yaml' }, /plugin parameter 'spec' 'linked-spec\.yaml' resolves outside the repository/],
    [
      'rendered ../',
      params([{ name: 'rendered', string: '../../other-tenant/rendered.yaml' }]),
      /plugin parameter 'rendered' '\.\.\/\.\.\/other-tenant\/rendered\.yaml' resolves outside the repository/,
    ],
    ['rendered directory', params([{ name: 'rendered', string: 'chart' }]), /plugin parameter 'rendered' 'chart' is a directory; a file is expected/],
  ];
  for (const [what, env, words] of cases) {
    const r = generate(app, env);
    assertRefused(r, words, what);
    assert.doesNotMatch(r.stdout + r.stderr, new RegExp(SECRET_TEXT), `${what}: the other tenant's file was read`);
  }
  // The same parameters inside the repository render.
  const ok = generate(app, values('values.yaml'));
  assert.equal(ok.status, 0, ok.stderr);
});

test('3. a values file that is not a regular file (a FIFO, /dev/zero by a link) is refused before helm reads it', () => {
  const root = repo('repo-irregular', { 'app/gracegate.yaml': SPEC }, { 'app/chart': 'test/fixtures/charts/istio-gateway-1.26-like' });
  const app = join(root, 'app');
  execFileSync('mkfifo', [join(app, 'values.fifo')]);
  symlinkSync('/dev/zero', join(app, 'zero.yaml'));
  // A short helm budget: if helm were given these, the run ends at it instead of at Argo CD's kill.
  const bounded = { GRACEGATE_HELM_TIMEOUT: '5s' };
  assertRefused(
    generate(app, {
      ...bounded,
      ...params([
        { name: 'chart', string: 'chart' },
        { name: 'values-files', array: ['values.fifo'] },
      ]),
    }),
    /plugin parameter 'values-files'\[0\] 'values\.fifo' is neither a regular file nor a directory \(a device, FIFO or socket\); a file is expected/,
    'FIFO',
  );
  assertRefused(
    generate(app, {
      ...bounded,
      ...params([
        { name: 'chart', string: 'chart' },
        { name: 'values-files', array: ['zero.yaml'] },
      ]),
    }),
    /plugin parameter 'values-files'\[0\] 'zero\.yaml' resolves outside the repository/,
    '/dev/zero',
  );
});

/**
 * A server on 127.0.0.1 that serves a values file and logs each request to a file: a process of its
 * own, since generate runs synchronously here and would block one in this process.
 */
const REQUESTS = join(tmp, 'requests.log');
let server: ChildProcess | undefined;
let serverPort = 0;
const requests = (): number => (existsSync(REQUESTS) ? readFileSync(REQUESTS, 'utf8').length : 0);
before(async () => {
  const code = `const http = require('node:http'); const fs = require('node:fs');
    const s = http.createServer((q, r) => { fs.appendFileSync(${JSON.stringify(REQUESTS)}, '.'); r.end('autoscaling:\\n  enabled: false\\n'); });
    s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;
  server = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  serverPort = await new Promise<number>((resolve) => server!.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
});
after(() => server?.kill());

test('3. a values file by URL is fetched only when the operator allows its scheme (GRACEGATE_VALUES_FILE_SCHEMES), never file:', () => {
  const root = repo('repo-url', { 'app/gracegate.yaml': SPEC }, { 'app/chart': 'test/fixtures/charts/istio-gateway-1.26-like' });
  const url = `http://127.0.0.1:${serverPort}/values.yaml`;
  const env = {
    ...params([
      { name: 'chart', string: 'chart' },
      { name: 'values-files', array: [url] },
    ]),
    NO_PROXY: '127.0.0.1',
  };
  const before = requests();
  assertRefused(generate(join(root, 'app'), env), /the URL scheme 'http' is not allowed/, 'http by default');
  assertRefused(generate(join(root, 'app'), { ...env, GRACEGATE_VALUES_FILE_SCHEMES: 'https' }), /not allowed \(allowed: https\)/, 'https only');
  assert.equal(requests(), before, 'no request reached the server');
  const fileUrl = params([
    { name: 'chart', string: 'chart' },
    { name: 'values-files', array: [`file://${join(OUTSIDE, 'secret.yaml')}`] },
  ]);
  assertRefused(
    generate(join(root, 'app'), { ...fileUrl, GRACEGATE_VALUES_FILE_SCHEMES: 'http,file' }),
    /the URL scheme 'file' is not allowed \(allowed: http\)/,
    'file:',
  );
  const allowed = generate(join(root, 'app'), { ...env, GRACEGATE_VALUES_FILE_SCHEMES: 'http' });
  assert.equal(allowed.status, 0, allowed.stderr);
  assert.equal(requests(), before + 1, 'helm fetched the allowed URL once');
});

test("3. a chart outside the repository renders only when the operator allows it by name (GRACEGATE_ALLOWED_CHARTS); a chart's file:// dependency must be in the repository", () => {
  const root = repo('repo-allowed', { 'app/gracegate.yaml': SPEC, 'app/values.yaml': 'autoscaling:\n  enabled: false\n' });
  const app = join(root, 'app');
  const outsideChart = join(OUTSIDE, 'chart');
  const env = params([
    { name: 'chart', string: outsideChart },
    { name: 'values-files', array: ['values.yaml'] },
  ]);
  assertRefused(generate(app, env), /plugin parameter 'chart' '.*other-tenant\/chart': no such file in the repository/, 'not allowed');
  const ok = generate(app, { ...env, GRACEGATE_ALLOWED_CHARTS: `oci://registry.example.com/charts/gateway, ${outsideChart}` });
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stderr, new RegExp(`-- igw-public ${outsideChart}`));
  // A dependency copied from outside by helm dependency build.
  const dep = repo('repo-dep', { 'app/gracegate.yaml': SPEC }, { 'app/chart': 'test/fixtures/charts/istio-gateway-1.26-like' });
  const chartYaml = join(dep, 'app/chart/Chart.yaml');
  writeFileSync(
    chartYaml,
    `${readFileSync(chartYaml, 'utf8')}dependencies:\n  - name: chart\n    version: '*'\n    repository: file://../../../other-tenant/chart\n`,
  );
  assertRefused(
    generate(join(dep, 'app'), params([{ name: 'chart', string: 'chart' }])),
    /the chart 'chart': Chart\.yaml: dependency 'file:\/\/\.\.\/\.\.\/\.\.\/other-tenant\/chart' is outside the repository/,
    'file:// dependency',
  );
});

test('5. a parameter of the wrong type or size (NUL, an object, a 20,000-deep list, too many files) is exit 2 naming the parameter, never a stack trace', () => {
  const root = repo('repo-types', { 'app/gracegate.yaml': SPEC }, { 'app/chart': 'test/fixtures/charts/istio-gateway-1.26-like' });
  const app = join(root, 'app');
  // Written as text: JSON.stringify itself overflows the stack on it.
  const deep = (name: string, kind: string) => ({
    ARGOCD_APP_PARAMETERS: `[{"name":"chart","string":"chart"},{"name":"${name}","${kind}":${'['.repeat(20_000)}${']'.repeat(20_000)}}]`,
  });
  const chart = { name: 'chart', string: 'chart' };
  const cases: Array<[string, NodeJS.ProcessEnv, RegExp]> = [
    [
      'NUL in a string',
      params([chart, { name: 'release-name', string: 'igw\u0000public' }]),
      /plugin parameter 'release-name' holds the control character U\+0000/,
    ],
    [
      'NUL in a values file',
      params([chart, { name: 'values-files', array: ['values\u0000.yaml'] }]),
      /plugin parameter 'values-files'\[0\] holds the control character U\+0000/,
    ],
    [
      'NUL in a set value',
      params([chart, { name: 'set', map: { 'podAnnotations.a': 'x\u0000y' } }]),
      /plugin parameter 'set' value of 'podAnnotations\.a' holds the control character U\+0000/,
    ],
    ['an object as a string', params([chart, { name: 'spec', string: { a: 1 } }]), /plugin parameter 'spec' must be a string, got an object/],
    [
      'an object in values-files',
      params([chart, { name: 'values-files', array: [{ a: 1 }] }]),
      /plugin parameter 'values-files'\[0\] must be a string, got an object/,
    ],
    ['a 20,000-deep list', deep('values-files', 'array'), /plugin parameter 'values-files'\[0\] must be a string, got a list/],
    ['a list as set', deep('set', 'map'), /plugin parameter 'set' must be a map of strings, got a list/],
    ['a deep list as a string', deep('spec', 'string'), /plugin parameter 'spec' must be a string, got a list/],
    ['an object as a set value', params([chart, { name: 'set', map: { a: { b: 1 } } }]), /plugin parameter 'set' value of 'a' must be a string, got an object/],
    ['a number as a set value', params([chart, { name: 'set', map: { a: 7 } }]), /plugin parameter 'set' value of 'a' must be a string, got a number/],
    [
      'too many values files',
      params([chart, { name: 'values-files', array: Array(65).fill('v.yaml') }]),
      /plugin parameter 'values-files' lists 65 files; at most 64/,
    ],
    [
      'a long string',
      params([chart, { name: 'target-name', string: 'a'.repeat(5000) }]),
      /plugin parameter 'target-name' is 5000 characters long; at most 4096/,
    ],
    [
      'a huge JSON',
      { ARGOCD_APP_PARAMETERS: JSON.stringify([{ name: 'set', map: { a: 'x'.repeat(100 * 1024) } }]) },
      /ARGOCD_APP_PARAMETERS is larger than 64 KiB/,
    ],
    [
      'a long set value',
      params([chart, { name: 'set', map: { a: 'x'.repeat(40 * 1024) } }]),
      /plugin parameter 'set' value of 'a' is 40960 characters long; at most 32768/,
    ],
  ];
  for (const [what, env, words] of cases) assertRefused(generate(app, env), words, what);
});

test('5. set values are --set-string, escaped as Argo CD escapes them (and soundly): a comma sets no further key, "true" stays a string; a key that is not a helm value path is refused', () => {
  const root = repo(
    'repo-set',
    { 'app/gracegate.yaml': SPEC, 'app/values.yaml': 'autoscaling:\n  enabled: false\n' },
    { 'app/chart': 'test/fixtures/charts/istio-gateway-1.26-like' },
  );
  const app = join(root, 'app');
  const set = {
    'podAnnotations.note': 'a,terminationGracePeriodSeconds=1',
    'podAnnotations.escaped': 'b\\\\,terminationGracePeriodSeconds=2',
    'podAnnotations.list': '{c}terminationGracePeriodSeconds=3',
    'podAnnotations.flag': 'true',
    'podAnnotations.kept': 'd\\,e',
  };
  const r = generate(
    app,
    params([
      { name: 'chart', string: 'chart' },
      { name: 'values-files', array: ['values.yaml'] },
      { name: 'set', map: set },
    ]),
  );
  assert.equal(r.status, 0, r.stderr);
  const dep = objects(r.stdout).find((o) => o.kind === 'Deployment')!;
  const annotations = dep.spec.template.metadata.annotations;
  assert.equal(annotations.note, 'a,terminationGracePeriodSeconds=1');
  assert.equal(annotations.escaped, 'b\\,terminationGracePeriodSeconds=2');
  assert.equal(annotations.list, '{c}terminationGracePeriodSeconds=3');
  assert.equal(annotations.flag, 'true', 'a string, not a bool');
  assert.equal(annotations.kept, 'd,e', "an escaped comma, as Argo CD's users write it");
  assert.notEqual(dep.spec.template.spec.terminationGracePeriodSeconds, 1);
  assert.ok(dep.spec.template.spec.terminationGracePeriodSeconds > 3, 'the plan set the grace period, no --set value did');
  for (const key of ['a,b', 'a=b', 'podAnnotations.{x}', 'a..b', 'a[x]']) {
    assertRefused(
      generate(
        app,
        params([
          { name: 'chart', string: 'chart' },
          { name: 'set', map: { [key]: 'v' } },
        ]),
      ),
      /plugin parameter 'set' key '.*' is not a helm value path/,
      `key ${key}`,
    );
  }
});

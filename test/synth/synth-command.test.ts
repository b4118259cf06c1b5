import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { CLI, REPO_ROOT, validateK8s, yamlDocs } from '../emit/helpers';

const work = mkdtempSync(join(tmpdir(), 'gracegate-synth-test-'));
after(() => rmSync(work, { recursive: true, force: true }));

function synth(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, 'synth', ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function specFile(name: string, text: string): string {
  const path = join(work, name);
  writeFileSync(path, text);
  return path;
}

const example = (file: string) => readFileSync(join(REPO_ROOT, 'examples', file), 'utf8');

describe('gracegate synth', () => {
  for (const file of readdirSync(join(REPO_ROOT, 'examples')).filter((f) => f.endsWith('.yaml'))) {
    it(`${file}: writes the overlay, valid manifests, plan.json and PLAN.md`, () => {
      const out = join(work, `out-${file}`);
      const r = synth([join(REPO_ROOT, 'examples', file), '--out', out]);
      assert.equal(r.status, 0, r.stderr);
      for (const f of ['values-overlay.yaml', 'manifests.yaml', 'plan.json', 'PLAN.md']) assert.ok(existsSync(join(out, f)), f);
      yamlDocs(readFileSync(join(out, 'manifests.yaml'), 'utf8')).forEach(validateK8s);
      assert.equal(JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8')).kind, 'GracefulGatewayPlan');
      assert.equal(typeof parse(readFileSync(join(out, 'values-overlay.yaml'), 'utf8')).terminationGracePeriodSeconds, 'number');
    });
  }

  it('writes the recommended NetworkPolicy: the health port for the LB only, the witness port for nobody but the node, every other port open', () => {
    const out = join(work, 'out-network-policy');
    const r = synth([join(REPO_ROOT, 'examples', 'haproxy.yaml'), '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    const text = readFileSync(join(out, 'network-policy.yaml'), 'utf8');
    assert.match(text, /^# Recommended NetworkPolicy .*NOT in manifests\.yaml/);
    const [policy] = yamlDocs(text);
    validateK8s(policy!);
    assert.deepEqual(policy!.spec.podSelector.matchLabels, { app: 'igw-public', istio: 'igw-public' });
    const [lb, rest] = policy!.spec.ingress;
    assert.deepEqual(lb, { from: [{ ipBlock: { cidr: '192.0.2.0/24' } }], ports: [{ protocol: 'TCP', port: 18180 }] });
    const tcp = rest.ports.filter((p: { protocol: string }) => p.protocol === 'TCP');
    assert.deepEqual(tcp, [{ protocol: 'TCP', port: 1, endPort: 18179 }, { protocol: 'TCP', port: 18181 }, { protocol: 'TCP', port: 18183, endPort: 65535 }]);
    assert.deepEqual(rest.ports.filter((p: { protocol: string }) => p.protocol !== 'TCP'), [{ protocol: 'UDP', port: 1, endPort: 65535 }, { protocol: 'SCTP', port: 1, endPort: 65535 }]);
    assert.ok(!yamlDocs(readFileSync(join(out, 'manifests.yaml'), 'utf8')).some((o) => o.kind === 'NetworkPolicy'), 'not applied with manifests.yaml');
  });

  it('writes containerd files only with spec.registry', () => {
    const spec = example('haproxy.yaml').replace('  health:', '  registry:\n    - prefix: docker.io\n      mirrors: [{host: "https://mirror.corp"}]\n  health:');
    const out = join(work, 'out-registry');
    assert.equal(synth([specFile('registry.yaml', spec), '--out', out]).status, 0);
    assert.ok(existsSync(join(out, 'containerd', 'certs.d', 'docker.io', 'hosts.toml')));
    assert.ok(existsSync(join(out, 'containerd', 'kubespray-containerd.yml')));
    assert.equal(existsSync(join(work, 'out-haproxy.yaml', 'containerd')), false);
  });

  it('istio/gateway 1.26 without post-render: exit 2, says what to do, leaves no out/ and no staging', () => {
    const spec = specFile('old.yaml', example('haproxy.yaml').replace('version: "1.27.9"', 'version: "1.26.8"'));
    const out = join(work, 'old', 'out');
    mkdirSync(join(work, 'old'));
    const r = synth([spec, '--out', out]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /gracegate post-render/);
    assert.match(r.stderr, /lifecycle/);
    assert.deepEqual(readdirSync(join(work, 'old')), []);
  });

  it('istio/gateway 1.26 with --kustomize: no overlay, the Kustomize component does the injection', () => {
    const spec = specFile('old-kustomize.yaml', example('haproxy.yaml').replace('version: "1.27.9"', 'version: "1.26.8"'));
    const out = join(work, 'old-kustomize-out');
    const r = synth([spec, '--out', out, '--kustomize']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /no values-overlay\.yaml \(istio-gateway 1\.26\.8 cannot carry it\)/);
    assert.equal(existsSync(join(out, 'values-overlay.yaml')), false);
    assert.ok(existsSync(join(out, 'kustomize', 'kustomization.yaml')));
    assert.ok(existsSync(join(out, 'manifests.yaml')));
  });

  it('a blocking finding: exit 1, nothing written; --fail-on none writes', () => {
    const spec = specFile('deadlock.yaml', example('haproxy.yaml').replace('nodes: 3 ', 'nodes: 2 ').replace('  health:', '  rollout: {maxSurge: 1, maxUnavailable: 0}\n  health:'));
    const out = join(work, 'out-deadlock');
    const r = synth([spec, '--out', out]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /rollout-surge-deadlock/);
    assert.equal(existsSync(out), false);
    assert.equal(synth([spec, '--out', out, '--fail-on', 'none']).status, 0);
  });

  it('replaces its own previous output whole, and refuses to replace anything else', () => {
    const out = join(work, 'out-replace');
    assert.equal(synth([join(REPO_ROOT, 'examples', 'haproxy.yaml'), '--out', out, '--image', 'a/b:1']).status, 0);
    writeFileSync(join(out, 'stale.txt'), 'old');
    assert.equal(synth([join(REPO_ROOT, 'examples', 'haproxy.yaml'), '--out', out, '--image', 'a/b:2']).status, 0);
    assert.equal(existsSync(join(out, 'stale.txt')), false);
    assert.match(readFileSync(join(out, 'values-overlay.yaml'), 'utf8'), /image: a\/b:2/);
    const precious = join(work, 'precious');
    mkdirSync(precious);
    writeFileSync(join(precious, 'keep.txt'), 'mine');
    const r = synth([join(REPO_ROOT, 'examples', 'haproxy.yaml'), '--out', precious]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /refusing/);
    assert.equal(readFileSync(join(precious, 'keep.txt'), 'utf8'), 'mine');
  });

  it('usage and input errors exit 2', () => {
    assert.equal(synth([join(REPO_ROOT, 'examples', 'haproxy.yaml')]).status, 2);
    assert.equal(synth(['--out', join(work, 'x')]).status, 2);
    const bad = synth([specFile('bad.yaml', 'apiVersion: nope\n'), '--out', join(work, 'bad-out')]);
    assert.equal(bad.status, 2);
    assert.equal(existsSync(join(work, 'bad-out')), false);
  });
});

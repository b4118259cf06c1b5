import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { CLI, REPO_ROOT, validateK8s, yamlDocs } from '../emit/helpers';
import { exampleSpecFiles } from '../support/examples';
import { lossText } from '../../src/plan/order-choice';

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
  for (const file of exampleSpecFiles('GracefulGateway')) {
    it(`${file}: writes the overlay, valid manifests, plan.json and PLAN.md`, () => {
      const out = join(work, `out-${file}`);
      const r = synth([join(REPO_ROOT, 'examples', file), '--out', out]);
      assert.equal(r.status, 0, r.stderr);
      // A Gateway API gateway has no chart: its pod changes go into the parameters ConfigMap.
      const gatewayApi = parse(example(file)).spec.chart.kind === 'gateway-api';
      const delivery = gatewayApi ? 'gateway-parameters.yaml' : 'values-overlay.yaml';
      for (const f of [delivery, 'manifests.yaml', 'plan.json', 'PLAN.md']) assert.ok(existsSync(join(out, f)), f);
      assert.equal(existsSync(join(out, gatewayApi ? 'values-overlay.yaml' : 'gateway-parameters.yaml')), false);
      yamlDocs(readFileSync(join(out, 'manifests.yaml'), 'utf8')).forEach(validateK8s);
      assert.equal(JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8')).kind, 'GracefulGatewayPlan');
      const delivered = parse(readFileSync(join(out, delivery), 'utf8'));
      const pod = gatewayApi ? parse(delivered.data.deployment).spec.template.spec : delivered;
      assert.equal(typeof pod.terminationGracePeriodSeconds, 'number');
    });
  }

  const policyOf = (out: string) => {
    const found = yamlDocs(readFileSync(join(out, 'manifests.yaml'), 'utf8')).filter((o) => o.kind === 'NetworkPolicy');
    assert.equal(found.length, 1, 'manifests.yaml holds the NetworkPolicy');
    validateK8s(found[0]!);
    return found[0]!;
  };
  const restOpen = (rest: { ports: Array<{ protocol: string }> }) => {
    assert.deepEqual(
      rest.ports.filter((p) => p.protocol === 'TCP'),
      [
        { protocol: 'TCP', port: 1, endPort: 18179 },
        { protocol: 'TCP', port: 18181 },
        { protocol: 'TCP', port: 18184, endPort: 65535 },
      ],
      'every TCP port but the health, witness and metrics ports open to all (18181, the control port, listens on 127.0.0.1 only)',
    );
    assert.deepEqual(
      rest.ports.filter((p) => p.protocol !== 'TCP'),
      [
        { protocol: 'UDP', port: 1, endPort: 65535 },
        { protocol: 'SCTP', port: 1, endPort: 65535 },
      ],
    );
  };

  it('manifests.yaml holds the NetworkPolicy: the health port for the LB only, the witness port for nobody but the node, the metrics port for the monitoring namespace, every other port open', () => {
    const spec = example('haproxy.yaml').replace(
      '  health:',
      '  networkPolicy:\n    lbSourceRanges: ["203.0.113.7/32", "198.51.100.0/24"]\n    metrics: {sourceRanges: ["203.0.113.9/32"]}\n  health:',
    );
    const out = join(work, 'out-network-policy');
    const r = synth([specFile('np.yaml', spec), '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(existsSync(join(out, 'network-policy.yaml')), false, 'no separate template any more');
    const policy = policyOf(out);
    assert.deepEqual(policy.spec.podSelector.matchLabels, { app: 'igw-public', istio: 'igw-public' });
    const [lb, metrics, rest, ...more] = policy.spec.ingress;
    assert.deepEqual(more, []);
    assert.deepEqual(lb, {
      from: [{ ipBlock: { cidr: '203.0.113.7/32' } }, { ipBlock: { cidr: '198.51.100.0/24' } }],
      ports: [{ protocol: 'TCP', port: 18180 }],
    });
    assert.deepEqual(metrics, {
      from: [{ ipBlock: { cidr: '203.0.113.9/32' } }, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
      ports: [{ protocol: 'TCP', port: 18183 }],
    });
    restOpen(rest);
    const plan = JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8')) as { findings: Array<{ id: string }> };
    assert.ok(!plan.findings.some((f) => f.id === 'network-policy-lb-sources-unknown'));
  });

  it('LB sources unknown: the health port stays open to all (a finding says so), the witness and metrics ports are closed all the same; enabled false writes none', () => {
    const out = join(work, 'out-network-policy-unknown');
    const r = synth([join(REPO_ROOT, 'examples', 'haproxy.yaml'), '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    const [health, metrics, rest, ...more] = policyOf(out).spec.ingress;
    assert.deepEqual(more, []);
    assert.deepEqual(health, { ports: [{ protocol: 'TCP', port: 18180 }] }, 'no from: every source');
    assert.deepEqual(metrics.from, [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
    restOpen(rest);
    assert.match(
      readFileSync(join(out, 'manifests.yaml'), 'utf8'),
      /# +health port 18180: open to every source, because spec\.networkPolicy\.lbSourceRanges is not set/,
    );
    const plan = JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8')) as { findings: Array<{ id: string; severity: string; field: string }> };
    const finding = plan.findings.find((f) => f.id === 'network-policy-lb-sources-unknown');
    assert.deepEqual(finding && [finding.severity, finding.field], ['warning', 'spec.networkPolicy.lbSourceRanges']);
    const off = join(work, 'out-network-policy-off');
    const spec = example('haproxy.yaml').replace('  health:', '  networkPolicy: {enabled: false}\n  health:');
    assert.equal(synth([specFile('np-off.yaml', spec), '--out', off]).status, 0);
    assert.ok(!yamlDocs(readFileSync(join(off, 'manifests.yaml'), 'utf8')).some((o) => o.kind === 'NetworkPolicy'));
  });

  it('a bad CIDR is an error naming the field, and nothing is written', () => {
    for (const [cidr, message] of [
      [
        '10.0.0.1',
        /bad-cidr\.yaml:\d+: spec\.networkPolicy\.lbSourceRanges\[0\]: '10\.0\.0\.1' is not a CIDR: write an address with its prefix length, e\.g\. 10\.0\.0\.1\/32/,
      ],
      ['10.0.0.0/33', /bad-cidr\.yaml:\d+: spec\.networkPolicy\.lbSourceRanges\[0\]: '10\.0\.0\.0\/33' is not a CIDR: the prefix length must be 0 to 32/],
      [
        '10.90.0.1/24',
        /bad-cidr\.yaml:\d+: spec\.networkPolicy\.lbSourceRanges\[0\]: '10\.90\.0\.1\/24' has bits set past its prefix \/24: write 10\.90\.0\.0\/24/,
      ],
      ['lb.corp/32', /'lb\.corp\/32' is not a CIDR: 'lb\.corp' is not an IPv4 or IPv6 address/],
      ['2001:db8::1/64', /'2001:db8::1\/64' has bits set past its prefix \/64: write 2001:db8::\/64/],
    ] as const) {
      const spec = example('haproxy.yaml').replace('  health:', `  networkPolicy:\n    lbSourceRanges: ["${cidr}"]\n  health:`);
      const out = join(work, `out-bad-cidr-${cidr.replace(/[^a-z0-9]/gi, '-')}`);
      const r = synth([specFile('bad-cidr.yaml', spec), '--out', out]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
      assert.equal(existsSync(out), false, 'nothing written');
    }
    const ok = example('haproxy.yaml').replace('  health:', '  networkPolicy:\n    lbSourceRanges: ["2001:db8::/64", "0.0.0.0/0"]\n  health:');
    assert.equal(synth([specFile('ok-cidr.yaml', ok), '--out', join(work, 'out-ok-cidr')]).status, 0);
  });

  it('writes containerd files only with spec.registry', () => {
    const spec = example('haproxy.yaml').replace(
      '  health:',
      '  registry:\n    - prefix: docker.io\n      mirrors: [{host: "https://mirror.corp"}]\n  health:',
    );
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
    const spec = specFile(
      'deadlock.yaml',
      example('haproxy.yaml').replace('nodes: 3 ', 'nodes: 2 ').replace('  health:', '  rollout: {maxSurge: 1, maxUnavailable: 0}\n  health:'),
    );
    const out = join(work, 'out-deadlock');
    const r = synth([spec, '--out', out]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /rollout-surge-deadlock/);
    assert.equal(existsSync(out), false);
    assert.equal(synth([spec, '--out', out, '--fail-on', 'none']).status, 0);
  });

  it("shares --out with the user's files: replaces and deletes only its own (attack 7)", () => {
    const out = join(work, 'out-shared');
    mkdirSync(join(out, 'src'), { recursive: true });
    writeFileSync(join(out, 'src', 'main.go'), 'package main\n');
    writeFileSync(join(out, 'README.md'), '# mine\n');
    const spec = join(REPO_ROOT, 'examples', 'haproxy.yaml');
    assert.equal(synth([spec, '--out', out, '--image', 'a/b:1', '--kustomize']).status, 0);
    const manifest = JSON.parse(readFileSync(join(out, '.gracegate-synth.json'), 'utf8'));
    assert.ok(manifest.files.includes('plan.json') && manifest.files.includes('kustomize/kustomization.yaml'));
    assert.ok(!manifest.files.includes('README.md'));
    // The user adds a file of their own among synth's; synth runs again, without --kustomize.
    writeFileSync(join(out, 'kustomize', 'mine.yaml'), 'x: 1\n');
    assert.equal(synth([spec, '--out', out, '--image', 'a/b:2']).status, 0);
    assert.match(readFileSync(join(out, 'values-overlay.yaml'), 'utf8'), /image: a\/b:2/);
    assert.equal(existsSync(join(out, 'kustomize', 'kustomization.yaml')), false, 'its own stale files are gone');
    assert.deepEqual(readdirSync(join(out, 'kustomize')), ['mine.yaml'], "the user's file beside them stays");
    assert.equal(readFileSync(join(out, 'src', 'main.go'), 'utf8'), 'package main\n');
    assert.equal(readFileSync(join(out, 'README.md'), 'utf8'), '# mine\n');
    // A hand-edited manifest cannot make synth delete outside DIR.
    writeFileSync(join(work, 'outside.txt'), 'keep');
    writeFileSync(
      join(out, '.gracegate-synth.json'),
      JSON.stringify({
        writtenBy: 'gracegate synth',
        files: [...JSON.parse(readFileSync(join(out, '.gracegate-synth.json'), 'utf8')).files, '../outside.txt', '/etc/hostname'],
      }),
    );
    assert.equal(synth([spec, '--out', out]).status, 0);
    assert.equal(readFileSync(join(work, 'outside.txt'), 'utf8'), 'keep');
  });

  it("refuses, writing nothing, to replace a file it did not write, such as the user's own plan.json", () => {
    const out = join(work, 'out-foreign');
    mkdirSync(join(out, 'src'), { recursive: true });
    writeFileSync(join(out, 'src', 'main.go'), 'package main\n');
    writeFileSync(join(out, 'README.md'), '# mine\n');
    writeFileSync(join(out, 'plan.json'), '{"mine": true}\n');
    const r = synth([join(REPO_ROOT, 'examples', 'haproxy.yaml'), '--out', out]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /refusing to replace plan\.json: not written by gracegate synth \(not in \.gracegate-synth\.json\)/);
    assert.deepEqual(readdirSync(out).sort(), ['README.md', 'plan.json', 'src']);
    assert.equal(readFileSync(join(out, 'plan.json'), 'utf8'), '{"mine": true}\n');
  });

  it('--out where nothing can be written (/proc, /sys, below a regular file): exit 2 naming the path (attack 12)', () => {
    writeFileSync(join(work, 'a-file'), 'x');
    for (const out of ['/proc/gracegate-synth-test', '/sys/gracegate-synth-test', join(work, 'a-file', 'out')]) {
      const r = synth([join(REPO_ROOT, 'examples', 'haproxy.yaml'), '--out', out]);
      assert.equal(r.status, 2, `${out}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`^--out ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: cannot write `), r.stderr);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
      assert.equal(r.stdout, '');
    }
  });

  it('says what the plan found and what it is before "wrote": each warning with its fix, then the summary line (issue 49)', () => {
    const out = join(work, 'out-told');
    const spec = join(REPO_ROOT, 'examples', 'haproxy.yaml');
    // One stream, as a terminal shows both: the order is what a person reads.
    const r = spawnSync('sh', ['-c', '"$0" "$1" synth "$2" --out "$3" 2>&1', process.execPath, CLI, spec, out], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stdout);
    const plan = JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8'));
    const shown = plan.findings.filter((f: { severity: string }) => f.severity !== 'info');
    assert.ok(shown.length > 0, 'the bundled example carries a warning');
    const lines = r.stdout.split('\n');
    const firstWrote = lines.findIndex((l) => l.startsWith('wrote '));
    for (const f of shown) {
      const at = lines.findIndex((l) => l.startsWith(`${spec}: ${f.severity} ${f.id} (${f.field}): `));
      assert.ok(at >= 0 && at < firstWrote, `${f.id} printed before "wrote"`);
      assert.equal(lines[at + 1], `  fix: ${f.remediation}`);
    }
    const summary = lines[firstWrote - 1]!;
    assert.ok(
      summary.startsWith(
        `${plan.gateway.namespace}/${plan.gateway.name}: ${plan.sequence}, grace period ${plan.timings.terminationGracePeriodSeconds} s, expected loss: `,
      ),
      summary,
    );
    // The chosen order's expected loss per termination, as plan.json carries it (issue 48), not recomputed.
    const chosen = plan.orders.find((o: { order: string }) => o.order === plan.sequence);
    assert.ok(chosen.expected > 0, 'the bundled HAProxy example expects a loss');
    assert.ok(summary.includes(`expected loss: ${lossText(chosen.expected)} requests per pod termination; `), summary);
    const losing = plan.findings.filter((f: { expectedLoss?: string }) => f.expectedLoss !== undefined && f.expectedLoss !== 'none');
    for (const f of losing) assert.ok(summary.includes(`${f.expectedLoss} (${f.id})`), summary);
    // A workload says its own numbers.
    const workload = synth([join(REPO_ROOT, 'examples', 'app-workload.yaml'), '--out', join(work, 'out-told-workload')]);
    const wplan = JSON.parse(readFileSync(join(work, 'out-told-workload', 'plan.json'), 'utf8'));
    assert.equal(
      workload.stdout.split('\n')[0],
      `${wplan.workload.namespace}/${wplan.workload.name}: preStop ${wplan.preStop.action} ${wplan.timings.preStopSeconds} s, shutdown timeout ${wplan.timings.shutdownTimeoutSeconds} s, grace period ${wplan.timings.terminationGracePeriodSeconds} s, expected loss: none predicted`,
    );
  });

  it('usage and input errors exit 2', () => {
    assert.equal(synth([join(REPO_ROOT, 'examples', 'haproxy.yaml')]).status, 2);
    assert.equal(synth(['--out', join(work, 'x')]).status, 2);
    const bad = synth([specFile('bad.yaml', 'apiVersion: nope\n'), '--out', join(work, 'bad-out')]);
    assert.equal(bad.status, 2);
    assert.equal(existsSync(join(work, 'bad-out')), false);
  });
});

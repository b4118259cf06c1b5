import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CLI, REPO_ROOT } from '../emit/helpers';

/** `gracegate synth DIR --out OUT`: a tree of specs into a tree of outputs. */

const work = mkdtempSync(join(tmpdir(), 'gracegate-synth-tree-'));
after(() => rmSync(work, { recursive: true, force: true }));

function synth(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, 'synth', ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const example = (file: string) => readFileSync(join(REPO_ROOT, 'examples', file), 'utf8');

/** A spec tree: two regions, one gateway at the top, whatever `extra` adds (path → text). */
function tree(name: string, extra: Record<string, string> = {}): string {
  const dir = join(work, name);
  const files: Record<string, string> = {
    'eu/igw-a.yaml': example('haproxy.yaml'),
    'us/igw-b.yaml': example('f5.yaml'),
    'top.yml': example('citrix.yaml'),
    ...extra,
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** Every file under `dir`, relative, sorted. */
function listing(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listing(dir, join(prefix, e.name)) : [join(prefix, e.name)]))
    .sort();
}

describe('gracegate synth DIR --out OUT', () => {
  it("mirrors the tree: each spec's output is what synth of that one file writes; a bad spec is named and the rest are written (exit 2)", () => {
    const specs = tree('mirror', { 'us/broken.yaml': example('haproxy.yaml').replace('replicas: 2', 'replicas: two') });
    const out = join(work, 'mirror-out');
    const r = synth([specs, '--out', out]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`^${join(specs, 'us/broken.yaml').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: spec\\.replicas: `, 'm'));
    assert.match(r.stderr, /3 of 4 gateways written .*; 1 not \(listed above\)/);
    assert.deepEqual(readdirSync(out).sort(), ['.gracegate-synth-tree.json', 'eu', 'top', 'us']);
    assert.deepEqual(readdirSync(join(out, 'us')), ['igw-b']);
    for (const [spec, gateway] of [
      ['eu/igw-a.yaml', 'eu/igw-a'],
      ['us/igw-b.yaml', 'us/igw-b'],
      ['top.yml', 'top'],
    ]) {
      const single = join(work, `single-${gateway.replace('/', '-')}`);
      assert.equal(synth([join(specs, spec!), '--out', single]).status, 0);
      assert.deepEqual(listing(join(out, gateway!)), listing(single), gateway);
      for (const f of listing(single)) assert.equal(readFileSync(join(out, gateway!, f), 'utf8'), readFileSync(join(single, f), 'utf8'), `${gateway}/${f}`);
    }
    assert.deepEqual(JSON.parse(readFileSync(join(out, '.gracegate-synth-tree.json'), 'utf8')).gateways, ['eu/igw-a', 'top', 'us/igw-b']);
    assert.equal(r.stdout.split('\n').filter((l) => l.startsWith('wrote ')).length, 3);
  });

  it("a Gateway API spec in the tree: its Gateway's parametersRef is printed under its line, as for one spec", () => {
    const specs = tree('gateway-api', { 'eu/igw-api.yaml': example('gateway-api.yaml') });
    const r = synth([specs, '--out', join(work, 'gateway-api-out')]);
    assert.equal(r.status, 0, r.stderr);
    const single = synth([join(specs, 'eu/igw-api.yaml'), '--out', join(work, 'gateway-api-single')]);
    const note = single.stdout.split('\n').find((l) => l.startsWith('Gateway: '))!;
    assert.match(note, /parametersRef: \{group: "", kind: ConfigMap, name: /);
    const lines = r.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('wrote ') && l.endsWith('eu/igw-api.yaml'));
    assert.equal(lines[at + 1], `  ${note}`);
    assert.equal(lines.filter((l) => l.includes('parametersRef')).length, 1, 'only the Gateway API gateway has one');
  });

  it('--fail-fast: stops at the first bad spec and writes nothing; without bad specs writes all', () => {
    const specs = tree('fast', { 'a-broken.yaml': 'kind: GracefulGateway\n' });
    const out = join(work, 'fast-out');
    const r = synth([specs, '--out', out, '--fail-fast']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /a-broken\.yaml.*\n[^]*stopped at .*a-broken\.yaml \(--fail-fast\); nothing written/);
    assert.equal(existsSync(out), false);
    rmSync(join(specs, 'a-broken.yaml'));
    assert.equal(synth([specs, '--out', out, '--fail-fast']).status, 0);
    assert.equal(readdirSync(out).length, 4);
  });

  it('a finding at --fail-on holds back that gateway only (exit 1)', () => {
    const deadlock = example('haproxy.yaml').replace('nodes: 3 ', 'nodes: 2 ').replace('  health:', '  rollout: {maxSurge: 1, maxUnavailable: 0}\n  health:');
    const specs = tree('blocked', { 'eu/deadlock.yaml': deadlock });
    const out = join(work, 'blocked-out');
    const r = synth([specs, '--out', out]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /deadlock\.yaml: error rollout-surge-deadlock/);
    assert.deepEqual(readdirSync(join(out, 'eu')), ['igw-a']);
  });

  it("keeps each gateway's output safe: a user's file is never replaced or deleted; a gone spec's output goes, a bad spec's stays", () => {
    const specs = tree('safe');
    const out = join(work, 'safe-out');
    assert.equal(synth([specs, '--out', out]).status, 0);
    // The user puts files of their own into two gateway directories, one in synth's place.
    writeFileSync(join(out, 'eu/igw-a/NOTES.md'), 'mine\n');
    writeFileSync(join(out, 'us/igw-b/values-overlay.yaml.bak'), 'mine\n');
    mkdirSync(join(out, 'top/kustomize'));
    writeFileSync(join(out, 'top/kustomize/kustomization.yaml'), '# mine\n');
    // eu/igw-a's spec is removed, us/igw-b's breaks.
    rmSync(join(specs, 'eu/igw-a.yaml'));
    writeFileSync(join(specs, 'us/igw-b.yaml'), 'spec: {}\n');
    const r = synth([specs, '--out', out, '--kustomize']);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /top: refusing to replace kustomize\/kustomization\.yaml: not written by gracegate synth/);
    assert.equal(readFileSync(join(out, 'top/kustomize/kustomization.yaml'), 'utf8'), '# mine\n');
    assert.match(r.stdout, /removed .*eu\/igw-a\/ \(its spec is gone\)/);
    assert.deepEqual(listing(join(out, 'eu')), ['igw-a/NOTES.md'], "synth's files gone, the user's stays");
    assert.ok(existsSync(join(out, 'us/igw-b/plan.json')), 'a bad spec keeps its last good output');
    assert.ok(existsSync(join(out, 'us/igw-b/values-overlay.yaml.bak')));
    const manifest = JSON.parse(readFileSync(join(out, '.gracegate-synth-tree.json'), 'utf8'));
    assert.deepEqual(manifest.gateways, ['top', 'us/igw-b']);
    // Fixed again: written again, and the removed gateway stays removed.
    cpSync(join(REPO_ROOT, 'examples/f5.yaml'), join(specs, 'us/igw-b.yaml'));
    rmSync(join(out, 'top/kustomize/kustomization.yaml'));
    assert.equal(synth([specs, '--out', out, '--kustomize']).status, 0);
    assert.ok(JSON.parse(readFileSync(join(out, 'top/.gracegate-synth.json'), 'utf8')).files.includes('kustomize/kustomization.yaml'));
    assert.deepEqual(JSON.parse(readFileSync(join(out, '.gracegate-synth-tree.json'), 'utf8')).gateways, ['top', 'us/igw-b']);
  });

  it('skips OUT inside DIR, dot entries and earlier synth outputs; two specs for one directory are both refused', () => {
    const specs = tree('skip', { '.hidden/x.yaml': 'x: 1\n', 'eu/igw-a.yml': example('nlb.yaml'), 'notes.txt': 'x' });
    assert.equal(synth([join(specs, 'top.yml'), '--out', join(specs, 'old-out')]).status, 0);
    const r = synth([specs, '--out', join(specs, 'out')]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /eu\/igw-a\.yaml and .*eu\/igw-a\.yml would both write eu\/igw-a\/: rename one/);
    assert.deepEqual(readdirSync(join(specs, 'out')).sort(), ['.gracegate-synth-tree.json', 'top', 'us']);
    // Run again with OUT inside DIR: its own output is not read as specs.
    const again = synth([specs, '--out', join(specs, 'out')]);
    assert.equal(again.status, 2);
    assert.doesNotMatch(again.stderr, /out\/top/);
  });

  it('bad calls: OUT is a file, an empty tree, --fail-fast with one file', () => {
    const specs = tree('calls');
    writeFileSync(join(work, 'a-file'), 'x');
    const file = synth([specs, '--out', join(work, 'a-file')]);
    assert.equal(file.status, 2);
    assert.equal(file.stderr.trim(), `--out ${join(work, 'a-file')}: exists and is not a directory`);
    mkdirSync(join(work, 'empty'));
    const empty = synth([join(work, 'empty'), '--out', join(work, 'empty-out')]);
    assert.equal(empty.status, 2);
    assert.match(empty.stderr, /no spec files \(\*\.yaml, \*\.yml\) in this directory tree/);
    const fast = synth([join(specs, 'top.yml'), '--out', join(work, 'x'), '--fail-fast']);
    assert.equal(fast.status, 2);
    assert.match(fast.stderr, /--fail-fast is for a directory of specs/);
  });
});

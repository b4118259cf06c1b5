/**
 * Issue 34, point 6: the CLI cannot be turned against the user's files. `synth --out DIR` deleted
 * files outside DIR when a subdirectory it once wrote (`kustomize/`) had been replaced by a symbolic
 * link; `lint DIR` followed a link to a parent directory until ELOOP, then printed a stack trace
 * and exited 1 (lint's "findings" code).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { REPO_ROOT, runCli } from '../support/run-cli';

const work = fs.mkdtempSync(join(os.tmpdir(), 'gracegate-symlinks-'));
after(() => fs.rmSync(work, { recursive: true, force: true }));

const files = (dir: string) => fs.readdirSync(dir, { recursive: true }).map(String).sort();

describe('synth --out DIR never writes or deletes through a link it did not create', () => {
  test('kustomize/ replaced by a link to a directory of the user: refused, naming the link; the files there untouched', () => {
    const spec = join(REPO_ROOT, 'examples', 'haproxy.yaml');
    const out = join(work, 'out');
    const first = runCli(['synth', spec, '--out', out, '--kustomize']);
    assert.equal(first.status, 0, first.stderr);
    assert.ok(fs.existsSync(join(out, 'kustomize')));
    // The user's own directory, holding files of the same names as synth's kustomize/ and others.
    const theirs = join(work, 'theirs');
    fs.cpSync(join(out, 'kustomize'), theirs, { recursive: true });
    fs.writeFileSync(join(theirs, 'notes.txt'), 'mine\n');
    const before = files(theirs);
    fs.rmSync(join(out, 'kustomize'), { recursive: true });
    fs.symlinkSync(theirs, join(out, 'kustomize'));
    for (const args of [
      ['synth', spec, '--out', out, '--kustomize'],
      ['synth', spec, '--out', out], // this run writes no kustomize/: its stale files would be deleted
    ]) {
      const r = runCli(args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(
        r.stderr,
        new RegExp(`refusing to write or delete through ${join(out, 'kustomize').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(a symbolic link\\)`),
      );
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
      assert.deepEqual(files(theirs), before, 'nothing deleted or added there');
      assert.equal(fs.readFileSync(join(theirs, 'notes.txt'), 'utf8'), 'mine\n');
    }
  });
});

describe('lint DIR and symbolic links', () => {
  test('a link back to a parent directory is a loop: exit 2 naming the link, no stack trace', () => {
    const dir = join(work, 'manifests');
    fs.mkdirSync(join(dir, 'sub'), { recursive: true });
    fs.copyFileSync(join(REPO_ROOT, 'test', 'lint', 'traps', 'witness-port-exposed.yaml'), join(dir, 'a.yaml'));
    fs.symlinkSync('..', join(dir, 'sub', 'up'));
    const r = runCli(['lint', dir]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`${join(dir, 'sub', 'up').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is a symbolic link loop`));
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  });

  test('a link to itself (ELOOP) and a dangling link: exit 2 naming the path, no stack trace', () => {
    for (const [name, target] of [
      ['self', 'self'],
      ['dangling', 'nowhere'],
    ] as const) {
      const dir = join(work, `lint-${name}`);
      fs.mkdirSync(dir, { recursive: true });
      fs.copyFileSync(join(REPO_ROOT, 'test', 'lint', 'traps', 'witness-port-exposed.yaml'), join(dir, 'a.yaml'));
      fs.symlinkSync(target, join(dir, name));
      const r = runCli(['lint', dir]);
      assert.equal(r.status, 2, `${name}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`cannot read ${join(dir, name).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: (ELOOP|ENOENT)`), name);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
  });

  test('a link to a directory elsewhere (no loop) is still followed', () => {
    const dir = join(work, 'lint-elsewhere');
    const other = join(work, 'other');
    fs.mkdirSync(dir, { recursive: true });
    fs.mkdirSync(other, { recursive: true });
    fs.copyFileSync(join(REPO_ROOT, 'test', 'lint', 'traps', 'witness-port-exposed.yaml'), join(other, 'a.yaml'));
    fs.symlinkSync(other, join(dir, 'linked'));
    const r = runCli(['lint', dir, '--format', 'json', '--fail-on', 'none']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /witness-port-exposed/);
  });
});

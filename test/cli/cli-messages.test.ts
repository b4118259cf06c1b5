/**
 * The CLI's own messages at every wrong turn (issue 49, item 3): a mistyped option or command gets
 * "did you mean" in gracegate's words and the one usage line that concerns it, never node's
 * parseArgs text nor the whole help; `help <command>` and `-v`; a spec file that is empty, UTF-16
 * or a list is named for what it is; a spec's problems come in the order of their lines.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli, REPO_ROOT } from '../support/run-cli';
import { testDir } from '../support/tmp';

const HAPROXY = join(REPO_ROOT, 'examples', 'haproxy.yaml');
const work = testDir('gracegate-cli-messages-');
const file = (name: string, content: string | Buffer) => {
  const path = join(work, name);
  writeFileSync(path, content);
  return path;
};
const version = (require(join(REPO_ROOT, 'package.json')) as { version: string }).version;

describe('a mistyped option or command', () => {
  test("--formt: did you mean '--format', the synopsis, the pointer to the help; none of parseArgs' words", () => {
    const r = runCli(['plan', HAPROXY, '--formt', 'json']);
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      [
        "gracegate plan: unknown option '--formt'; did you mean '--format'?",
        'usage: gracegate plan <spec.yaml> [--format text|json|svg] [--fail-on error|warning|info|none]',
        "Run 'gracegate help plan' for every option.",
        '',
      ].join('\n'),
    );
  });

  test('-format (one dash) is named as typed, and -o, no longer an undocumented alias, points to --out', () => {
    const one = runCli(['plan', HAPROXY, '-format', 'json']);
    assert.equal(one.status, 2);
    assert.match(one.stderr, /^gracegate plan: unknown option '-format'; did you mean '--format'\?\n/);
    const o = runCli(['synth', HAPROXY, '-o', join(work, 'out')]);
    assert.equal(o.status, 2);
    assert.match(o.stderr, /^gracegate synth: unknown option '-o'; did you mean '--out'\?\n/);
    assert.doesNotMatch(runCli(['synth', '--help']).stdout, /-o\b/);
  });

  test("a value problem shows the option's own line of the help, not the whole help", () => {
    const r = runCli(['lint', HAPROXY, '--format', 'yaml']);
    assert.equal(r.status, 2);
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines[0], "gracegate lint: --format must be text, json or sarif, got 'yaml'");
    assert.match(lines[1]!, /^ {2}--format FORMAT {4}text \(default\), json/);
    assert.equal(lines.at(-1), "Run 'gracegate help lint' for every option.");
    assert.ok(lines.length <= 4, r.stderr);
    const missing = runCli(['lint', HAPROXY, '--format']);
    assert.match(missing.stderr, /^gracegate lint: --format needs a value\n {2}--format FORMAT/);
    const flag = runCli(['synth', HAPROXY, '--out', join(work, 'x'), '--kustomize=yes']);
    assert.match(flag.stderr, /^gracegate synth: --kustomize takes no value\n/);
    const ambiguous = runCli(['plan', HAPROXY, '--format', '--fail-on']);
    assert.match(ambiguous.stderr, /^gracegate plan: --format needs a value, and '--fail-on' looks like an option/);
  });

  test('an unknown command: did you mean, one usage line; `gracegate help` lists the commands', () => {
    const r = runCli(['plna', HAPROXY]);
    assert.equal(r.status, 2);
    assert.equal(
      r.stderr,
      "gracegate: unknown command 'plna'; did you mean 'plan'?\nusage: gracegate <command> [options]   (gracegate help <command> for its options)\nRun 'gracegate help' for the commands.\n",
    );
    const help = runCli(['help']);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^ {2}plan {9}choose the termination sequence/m);
  });

  test("`gracegate help <command>` is the command's --help; an unknown one is refused as a command is", () => {
    const help = runCli(['help', 'plan']);
    assert.equal(help.status, 0);
    assert.equal(help.stdout, runCli(['plan', '--help']).stdout);
    assert.match(help.stdout, /^usage: gracegate plan /);
    const unknown = runCli(['help', 'lnt']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /unknown command 'lnt'; did you mean 'lint'\?/);
  });

  test('-v and --version print the version, and the help lists both', () => {
    for (const flag of ['-v', '--version']) {
      const r = runCli([flag]);
      assert.equal(r.status, 0, flag);
      assert.equal(r.stdout, `${version}\n`);
    }
    assert.match(runCli(['--help']).stdout, /^ {2}-v, --version {3}the version$/m);
  });
});

describe('a spec file that is no spec is named for what it is', () => {
  test('an empty file, a comment-only file, a top-level list, a string', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['empty.yaml', '', /empty\.yaml: \(document\): the file is empty: a spec is one YAML mapping with apiVersion, kind, metadata and spec/],
      ['comments.yaml', '# nothing yet\n', /comments\.yaml: \(document\): the file holds no YAML document \(only comments/],
      [
        'list.yaml',
        '- apiVersion: gracegate.dev/v1alpha1\n- kind: GracefulGateway\n',
        /list\.yaml:1: \(document\): the document is a list \(of 2\), not a mapping/,
      ],
      ['string.yaml', 'gateway\n', /string\.yaml:1: \(document\): the document is a string \("gateway"\), not a mapping/],
    ];
    for (const [name, text, expected] of cases) {
      const r = runCli(['plan', file(name, text)]);
      assert.equal(r.status, 2, name);
      assert.match(r.stderr, expected, name);
      assert.doesNotMatch(r.stderr, /kind: required/, name);
    }
  });

  test('UTF-16 (with a byte-order mark, or without: a NUL in every other byte) and Latin-1: the encoding and the iconv line', () => {
    const text = `# Ü\n${readFileSync(HAPROXY, 'utf8')}`;
    const bom = file('utf16-bom.yaml', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    const r = runCli(['plan', bom]);
    assert.equal(r.status, 2);
    assert.equal(
      r.stderr,
      `gracegate plan: ${bom} is UTF-16 text (it starts with a UTF-16 byte-order mark); gracegate reads UTF-8 text: convert it: iconv -f UTF-16 -t UTF-8 ${bom} > ${bom}.txt\n`,
    );
    const bare = file('utf16.yaml', Buffer.from(text, 'utf16le'));
    assert.match(runCli(['plan', bare]).stderr, /is UTF-16 text \(a NUL byte in every other byte\)/);
    const latin1 = file('latin1.yaml', Buffer.from(text, 'latin1'));
    assert.match(
      runCli(['plan', latin1]).stderr,
      /latin1\.yaml is not UTF-8 text \(byte 0xdc on line 1\); gracegate reads UTF-8 text: convert it: iconv -f LATIN1/,
    );
    const lint = runCli(['lint', bare]);
    assert.equal(lint.status, 2);
    assert.match(lint.stderr, /utf16\.yaml is UTF-16 text/);
  });

  test("a spec's problems come in the order of their lines, whatever order the schema checks them in", () => {
    // spec before metadata: the schema checks metadata first.
    const spec = file(
      'order.yaml',
      [
        'apiVersion: gracegate.dev/v1alpha1',
        'kind: GracefulGateway',
        'spec:',
        '  replicas: two',
        '  nodes: 3',
        '  chart: {kind: istio-gateway, version: "1.27.9"}',
        '  traffic: {longRequestP99Seconds: 100}',
        '  loadBalancer: {model: haproxy, intr: 2s}',
        '  health: {exposure: nodePort, port: 18180, nodePort: 30180}',
        'metadata: {name: igw-public, namespace: istio-ingress, colour: blue}',
        '',
      ].join('\n'),
    );
    const r = runCli(['plan', spec]);
    assert.equal(r.status, 2);
    const lines = r.stderr
      .trimEnd()
      .split('\n')
      .map((l) => Number(/^[^:]+:(\d+):/.exec(l)?.[1]));
    assert.ok(lines.length >= 3, r.stderr);
    assert.deepEqual(
      lines,
      [...lines].sort((a, b) => a - b),
      r.stderr,
    );
    assert.match(r.stderr, /:8: spec\.loadBalancer\.intr: unknown key; did you mean 'inter'\?/);
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, REPO_ROOT } from '../support/run-cli';
import { exampleSpecFiles } from '../support/examples';
import { testDir } from '../support/tmp';

const EXAMPLES = readdirSync(join(REPO_ROOT, 'examples'))
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const GATEWAYS = exampleSpecFiles('GracefulGateway');
const SHIPPED = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { files: string[] }).files;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f)) : [join(dir, f)]));
}

/** Everything a user reads from plan, lb-config and synth for every example spec. */
function userFacingOutput(): Array<{ what: string; text: string }> {
  const out: Array<{ what: string; text: string }> = [];
  const tmp = testDir('gracegate-citations-');
  for (const example of EXAMPLES) {
    const spec = join('examples', example);
    // lb-config is a gateway's only: a workload has no LB of its own to configure.
    const lbConfig = GATEWAYS.includes(example) ? [['lb-config', spec]] : [];
    for (const args of [['plan', spec, '--fail-on', 'none'], ['plan', spec, '--format', 'json', '--fail-on', 'none'], ...lbConfig]) {
      const r = runCli(args);
      assert.ok(r.status === 0, `${args.join(' ')}: ${r.stderr}`);
      out.push({ what: args.join(' '), text: r.stdout });
    }
    const dir = join(tmp, example);
    const r = runCli(['synth', spec, '--out', dir, '--kustomize', '--fail-on', 'none']);
    assert.equal(r.status, 0, r.stderr);
    for (const file of filesUnder(dir)) out.push({ what: `synth ${example}: ${file.slice(dir.length + 1)}`, text: readFileSync(file, 'utf8') });
  }
  return out;
}

test('plan, lb-config and synth cite only what ships with gracegate or public sources', () => {
  const facts = readFileSync(join(REPO_ROOT, 'docs', 'facts.md'), 'utf8');
  for (const { what, text } of userFacingOutput()) {
    assert.doesNotMatch(text, /FACTS\.md|\.\.\/shared/, `${what} cites a file users do not have`);
    assert.doesNotMatch(text, /\bseed\b/i, `${what} speaks of a seed users never saw`);
    for (const [, path] of text.matchAll(/\b(docs\/[\w./-]+\.md)/g)) {
      assert.ok(existsSync(join(REPO_ROOT, path!)), `${what}: ${path} does not exist`);
      assert.ok(SHIPPED.includes(path!.split('/')[0]!), `${what}: ${path} is not in the package's files`);
    }
    for (const [, section] of text.matchAll(/docs\/facts\.md §(\d+)/g)) {
      assert.match(facts, new RegExp(`^## ${section}\\. `, 'm'), `${what}: docs/facts.md has no section ${section}`);
    }
  }
});

test('the shipped sources and docs cite docs/facts.md or public sources, never a file users do not have', () => {
  const shipped = [
    ...filesUnder(join(REPO_ROOT, 'src')),
    ...readdirSync(join(REPO_ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(REPO_ROOT, 'docs', f)),
  ];
  const offenders = shipped
    .filter((f) => {
      const text = readFileSync(f, 'utf8');
      return /FACTS\.md|\.\.\/shared\//.test(text) || /\bseed\b/i.test(text);
    })
    .map((f) => f.slice(REPO_ROOT.length + 1));
  assert.deepEqual(offenders, []);
});

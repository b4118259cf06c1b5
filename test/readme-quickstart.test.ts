/**
 * The README's quick start, run as written on a fresh clone (issue 49): `git clone` of this
 * commit, with this checkout's build beside it (node_modules and dist are what the README's set-up
 * command makes), every line of the quick-start block run by sh in the clone, in order. The one
 * line that needs a cluster, `kubectl logs`, is replaced by an access log in Istio's text format
 * with kubectl's --timestamps prefix, so measure's real path is taken. The outputs the README
 * shows after the block are what those commands print (GRACEGATE_UPDATE_DOCS=1 rewrites them),
 * and the apply and watch lines name files synth wrote. The README stays a front door: at most 200
 * lines, what gracegate is within its first 15.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { before, describe, test } from 'node:test';
import { REPO_ROOT } from './support/repo';
import { testDir } from './support/tmp';

const README = join(REPO_ROOT, 'README.md');
const readme = (): string => readFileSync(README, 'utf8');
const UPDATE = process.env.GRACEGATE_UPDATE_DOCS === '1';

/** The text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` (without the marker lines). */
function block(text: string, name: string): string {
  const begin = `<!-- ${name}:begin`;
  const i = text.indexOf(begin);
  const j = text.indexOf(`<!-- ${name}:end -->`);
  assert.ok(i >= 0 && j > i, `README.md has the ${name} markers`);
  return text.slice(text.indexOf('\n', i) + 1, j);
}

function replaceBlock(text: string, name: string, body: string): string {
  const i = text.indexOf(`<!-- ${name}:begin`);
  const start = text.indexOf('\n', i) + 1;
  return text.slice(0, start) + body + text.slice(text.indexOf(`<!-- ${name}:end -->`));
}

/** The commands of a ```sh block: its lines without comments and blank ones. */
const commands = (fenced: string): string[] =>
  fenced
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('```') && !l.trim().startsWith('#'))
    .map((l) => l.replace(/\s+#.*$/, ''));

/** An access log as `kubectl logs --timestamps -c istio-proxy` prints it: 980 short requests, 20 long ones. */
function accessLog(): string {
  const lines: string[] = [];
  for (let i = 0; i < 1000; i++) {
    const ms = i % 50 === 7 ? 24_000 + i : 40 + (i % 900);
    const start = new Date(Date.UTC(2026, 11, 1, 10, 0, 0) + i * 1000).toISOString();
    lines.push(
      `${start.replace('Z', '123456Z')} [${start}] "GET /api/orders/${i} HTTP/1.1" 200 - via_upstream - "-" 0 512 ${ms} ${ms - 1} "-" "curl/8.5.0" "${i}" "shop.example.com" "10.244.1.9:8080" outbound|8080||orders.shop.svc.cluster.local 10.244.1.7:41234 10.244.1.7:8080 10.0.0.9:50000 - orders`,
    );
  }
  return `${lines.join('\n')}\n`;
}

describe("the README's quick start on a fresh clone", () => {
  const outputs = new Map<string, string>();
  let clone = '';

  before(() => {
    clone = join(testDir('gracegate-quickstart-'), 'gracegate');
    const git = spawnSync('git', ['clone', '--quiet', '--local', REPO_ROOT, clone], { encoding: 'utf8' });
    assert.equal(git.status, 0, git.stderr);
    // The set-up command's products (npm ci && npm run build), from this checkout.
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(clone, 'node_modules'));
    symlinkSync(join(REPO_ROOT, 'dist'), join(clone, 'dist'));
    for (const line of commands(block(readme(), 'quickstart'))) {
      if (line.startsWith('kubectl logs ')) {
        const out = /> (\S+)$/.exec(line)?.[1];
        assert.ok(out, `${line}: writes a file`);
        writeFileSync(join(clone, out), accessLog());
        continue;
      }
      // Both streams in one, in the order a terminal shows them.
      const r = spawnSync('sh', ['-c', `(${line}) 2>&1`], { cwd: clone, encoding: 'utf8', timeout: 60_000, env: { ...process.env, COLUMNS: '100' } });
      assert.equal(r.status, 0, `${line}\n${r.stdout}`);
      outputs.set(line, r.stdout);
    }
  });

  test('every line ran (above), in the order that works: measure, copy an example, write the number, plan, synth', () => {
    const lines = [...outputs.keys()];
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    const order = [
      /measure p99 --access-log \S+$/,
      /^cp examples\/\S+\.yaml gateway\.yaml$/,
      /--write gateway\.yaml$/,
      /gracegate plan gateway\.yaml$/,
      /gracegate synth gateway\.yaml/,
    ];
    const positions = order.map(at);
    assert.ok(
      positions.every((p, i) => p >= 0 && (i === 0 || p > positions[i - 1]!)),
      lines.join('\n'),
    );
    const measured = outputs.get(lines[positions[0]!]!)!;
    assert.match(measured, /longRequestP99Seconds/);
    assert.match(readFileSync(join(clone, 'gateway.yaml'), 'utf8'), /longRequestP99Seconds: \d+/);
  });

  test('the outputs the README shows are what the commands printed', () => {
    const plan = [...outputs.entries()].find(([l]) => /gracegate plan gateway\.yaml$/.test(l))![1];
    const synth = [...outputs.entries()].find(([l]) => /gracegate synth gateway\.yaml/.test(l))![1];
    // The plan's head (the gateway, its LB, the sequence) and its timeline, as printed.
    const lines = plan.split('\n');
    const head = lines
      .slice(
        0,
        lines.findIndex((l) => l === ''),
      )
      .join('\n');
    const timeline = lines.slice(lines.findIndex((l) => l.startsWith('timeline')));
    const shownPlan = ['```', '$ npx gracegate plan gateway.yaml', head, '...', ...timeline.slice(0, timeline.indexOf('')), '...', '```', ''].join('\n');
    const shownSynth = ['```', '$ npx gracegate synth gateway.yaml --out out', synth.trimEnd(), '```', ''].join('\n');
    if (UPDATE) writeFileSync(README, replaceBlock(replaceBlock(readme(), 'quickstart-plan', shownPlan), 'quickstart-synth', shownSynth));
    assert.equal(block(readme(), 'quickstart-plan'), shownPlan, 'GRACEGATE_UPDATE_DOCS=1 node --test dist/test/readme-quickstart.test.js');
    assert.equal(block(readme(), 'quickstart-synth'), shownSynth, 'GRACEGATE_UPDATE_DOCS=1 node --test dist/test/readme-quickstart.test.js');
  });

  test('the apply and watch lines name the files synth wrote, and the sidecar as the pod runs it', () => {
    const apply = block(readme(), 'apply');
    const named = [...apply.matchAll(/\bout\/([\w.-]+\.ya?ml)\b/g)].map((m) => m[1]!);
    assert.ok(named.length >= 3, apply);
    for (const f of named) assert.ok(existsSync(join(clone, 'out', f)), `out/${f}`);
    const overlay = readFileSync(join(clone, 'out', 'values-overlay.yaml'), 'utf8');
    assert.match(apply, /-c gracegate-hc -- gracegate state --config \/etc\/gracegate\/hc\.json/);
    assert.match(overlay, /name: gracegate-hc/);
    assert.match(overlay, /--config\s*\n?\s*- \/etc\/gracegate\/hc\.json|\/etc\/gracegate\/hc\.json/);
  });
});

describe('the README as a front door', () => {
  test('at most 200 lines; what gracegate is and the problem it solves in the first 15', () => {
    const lines = readme().split('\n');
    assert.ok(lines.length <= 200, `README.md has ${lines.length} lines`);
    const top = lines.slice(0, 15).join('\n');
    assert.match(top, /^# gracegate/);
    assert.match(top, /health endpoint/);
    assert.match(top, /load balancer/);
  });

  test(".ci/run runs the README's test command, and the README's set-up commands are the two it names", () => {
    const ci = readFileSync(join(REPO_ROOT, '.ci', 'run'), 'utf8')
      .trimEnd()
      .split('\n')
      .at(-1)!;
    assert.equal(ci, 'npm ci && npm test');
    const setUp = readme().slice(readme().indexOf('## Set up'));
    assert.ok(setUp.includes(`\n${ci}\n`), "the README gives .ci/run's command");
    assert.ok(setUp.includes('\nnpm ci && npm run build && npx gracegate plan examples/haproxy.yaml\n'));
  });

  test('every relative link of the README, CONTRIBUTING.md and the pages under docs/ leads to a file', () => {
    const pages = [
      'README.md',
      'CONTRIBUTING.md',
      ...readdirSync(join(REPO_ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => join('docs', f)),
    ];
    const broken = pages.flatMap((page) =>
      [...readFileSync(join(REPO_ROOT, page), 'utf8').matchAll(/\]\((?!https?:|mailto:|#)([^)\s#]+)(?:#[^)\s]*)?\)/g)]
        .map((m) => m[1]!)
        .filter((target) => !existsSync(join(REPO_ROOT, dirname(page), target)))
        .map((target) => `${page}: ${target}`),
    );
    assert.deepEqual(broken, []);
  });

  test('one line per command, each linking its page under docs/, and every page it links exists', () => {
    const text = readme();
    const help = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'gracegate.js'), 'help'], { encoding: 'utf8' }).stdout;
    const names = (/\ncommands:\n([\s\S]*?)\n\n/.exec(help)?.[1] ?? '').split('\n').map((l) => l.trim().split(/\s+/)[0]!);
    const section = block(text, 'commands');
    for (const name of names) assert.match(section, new RegExp(`^- \`${name}\`.*\\]\\(docs/[\\w-]+\\.md(#[\\w-]+)?\\)`, 'm'), name);
    for (const [, target] of text.matchAll(/\]\(((?:docs\/|CONTRIBUTING|test\/)[^)#\s]*)/g)) assert.ok(existsSync(join(REPO_ROOT, target!)), target);
  });
});

/**
 * Numbers in the README and docs/ held to where they come from (issue 49, item 2), for the figures
 * that drifted while copied by hand: the plan's timings of the bundled examples (docs/plan.md said
 * NLB's LB buffer was lbDetect + 40 s + margin, 76 s, where the plan computes 126 s) and the count of
 * lint rules ("24 rules" beside 26). The timings block is rendered from the plans of examples/
 * (GRACEGATE_UPDATE_DOCS=1 rewrites it); a count of rules anywhere must be the registry's. Every
 * `<!-- bench:NAME:begin -->` block on any page is what that benchmark last wrote to
 * docs/benchmarks.json (test/support/bench-results.ts), and docs/lint.md's speed is lint-bench's
 * record in docs/lint-comparison.json.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { LINT_RULES } from '../src/lint/registry';
import { planGateway } from '../src/plan/plan-gateway';
import { parseGatewaySpec } from '../src/schema/parse-spec';
import { exampleSpecFiles } from './support/examples';
import { BENCH_DOC, benchBlocks, docPages, readBenchResults, renderBench } from './support/bench-results';
import { REPO_ROOT } from './support/repo';

const PLAN_DOC = join(REPO_ROOT, 'docs', 'plan.md');
const LINT_DOC = join(REPO_ROOT, 'docs', 'lint.md');

/** The text between `<!-- NAME:begin … -->` and `<!-- NAME:end -->` in `doc` rewritten (GRACEGATE_UPDATE_DOCS=1) or held to `generated`. */
function holdBlock(file: string, name: string, generated: string): void {
  const doc = readFileSync(file, 'utf8');
  const begin = doc.indexOf(`<!-- ${name}:begin`);
  const start = doc.indexOf('\n', begin) + 1;
  const end = doc.indexOf(`<!-- ${name}:end -->`);
  assert.ok(begin >= 0 && end >= start, `${file} has the ${name} markers`);
  if (process.env.GRACEGATE_UPDATE_DOCS === '1') writeFileSync(file, doc.slice(0, start) + generated + doc.slice(end));
  else assert.equal(doc.slice(start, end), generated, 'GRACEGATE_UPDATE_DOCS=1 node --test dist/test/docs-numbers.test.js');
}

/** What `node dist/bench/lint-bench.js --write` recorded in docs/lint-comparison.json (`timing`). */
type LintTiming = {
  objects: number;
  mib: number;
  runs: number;
  load: number;
  cpus: number;
  findings?: number;
  gracegate: { wallMs: number; cpuMs: number };
  kubeScore: { wallMs: number; cpuMs: number; runs: number };
  inProcessMs?: number;
  readJsYamlMs?: number;
  readYamlMs?: number;
};

const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

/** docs/lint.md's speed block: the table and the sentences that quote it, from the recorded run. */
function lintSpeed(t: LintTiming): string {
  const reading: [string, number | undefined][] = [
    ['lint in process (read, rules, locate)', t.inProcessMs],
    ["reading alone: js-yaml's events and values (what lint uses)", t.readJsYamlMs],
    ["reading alone: yaml's `parseAllDocuments` + `toJS`", t.readYamlMs],
  ];
  const findings = t.findings === undefined ? '' : `; ${t.findings.toLocaleString('en')} findings`;
  return [
    `${t.objects.toLocaleString('en')} objects (${t.mib} MiB${findings}), medians of ${t.runs} runs (${t.kubeScore.runs} for kube-score), load average ${t.load} on ${t.cpus} CPUs at the end (\`docs/lint-comparison.json\`, \`timing\`):`,
    '',
    '| what | wall | CPU (user + system) |',
    '|---|---|---|',
    `| \`gracegate lint FILE --format json\`, a fresh process | ${seconds(t.gracegate.wallMs)} | ${seconds(t.gracegate.cpuMs)} |`,
    ...reading.filter(([, ms]) => ms !== undefined).map(([what, ms]) => `| ${what} | ${seconds(ms!)} | |`),
    `| \`kube-score score FILE -o json\` | ${seconds(t.kubeScore.wallMs)} | ${seconds(t.kubeScore.cpuMs)} |`,
    '',
    `The CPU time, which the machine's load does not inflate, is ${seconds(t.gracegate.cpuMs)}: ${t.gracegate.cpuMs < 2000 ? 'under' : 'NOT under'} the 2 s target, start-up included; on a loaded machine the wall time is longer by the waits for a core. kube-score takes ${(t.kubeScore.cpuMs / t.gracegate.cpuMs).toFixed(1)} times the CPU on the same file.`,
    '',
  ].join('\n');
}

function exampleTimings(): string {
  const rows = exampleSpecFiles('GracefulGateway').map((file) => {
    const plan = planGateway(parseGatewaySpec(readFileSync(join(REPO_ROOT, 'examples', file), 'utf8'), file));
    const t = plan.timings;
    const buffer = plan.derivations.lbBufferSeconds;
    return `| \`examples/${file}\` | ${plan.loadBalancer.model} | ${plan.sequence} | ${t.lbDetectSeconds} s | ${t.lbBufferSeconds} s = \`${buffer.formula}\` | ${t.drainTimeoutSeconds} s | ${t.terminationGracePeriodSeconds} s | ${plan.healthProbe.via} |`;
  });
  return [
    '| example | LB | sequence | lbDetectSeconds | lbBufferSeconds | drainTimeoutSeconds | terminationGracePeriodSeconds | probe enters by |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

test("docs/plan.md's table of the examples' timings is what the planner computes now", () => {
  const generated = exampleTimings();
  holdBlock(PLAN_DOC, 'example-timings', generated);
  assert.match(generated, /\| nlb \| [\w-]+ \| \d+ s \| 126 s = `max\(lbDetectSeconds \+ propagationDelay, deregistrationLag\) \+ lbMargin`/);
});

test("docs/lint.md's speed is what lint-bench recorded in docs/lint-comparison.json", () => {
  const timing = (JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'lint-comparison.json'), 'utf8')) as { timing: LintTiming }).timing;
  holdBlock(LINT_DOC, 'lint-speed', lintSpeed(timing));
});

test("a count of lint rules in the README or docs/ is the registry's", () => {
  for (const page of docPages()) {
    for (const [claim, n] of readFileSync(page, 'utf8').matchAll(/\b(\d+) (?:lint )?rules\b/g))
      assert.equal(Number(n), LINT_RULES.length, `${page}: "${claim}"`);
  }
});

test('every bench block in the README and docs/ shows what its benchmark wrote to docs/benchmarks.json', () => {
  const results = readBenchResults();
  const shown = new Set<string>();
  for (const page of docPages()) {
    for (const name of benchBlocks(readFileSync(page, 'utf8'))) {
      shown.add(name);
      const result = results[name];
      assert.ok(result, `${page}: docs/benchmarks.json has no '${name}': node dist/bench/<its bench>.js --write`);
      holdBlock(page, `bench:${name}`, renderBench(result));
    }
  }
  assert.ok(benchBlocks(readFileSync(BENCH_DOC, 'utf8')).length > 0, 'docs/benchmarks.md has bench blocks');
  // A result no page shows is a run nobody reads: every entry has its block.
  assert.deepEqual(
    Object.keys(results).filter((name) => !shown.has(name)),
    [],
    'every result in docs/benchmarks.json is shown on a page',
  );
});

/** docs/envoy.md's reading of the drain-order run: the sidecar's order (plain, then `?graceful`) reset no more requests than the other, on every version. */
test("docs/envoy.md's choice of drain order holds against envoy-drain-order's recorded run", () => {
  const run = readBenchResults()['envoy-drain-order'];
  assert.ok(run, 'docs/benchmarks.json has envoy-drain-order: node dist/bench/envoy-drain-order.js 20 --write');
  const resets = new Map<string, number>();
  for (const [, version, calls, reset] of run.markdown.matchAll(/^\| ([\d.]+) \| ([^|]+?) \| \d+ \| \d+ \| (\d+) \|/gm))
    resets.set(`${version} ${calls}`, Number(reset));
  const versions = new Set([...resets.keys()].map((k) => k.split(' ')[0]!));
  assert.ok(versions.size >= 2, `the run covers every pinned Envoy: ${[...versions].join(', ')}`);
  for (const v of versions) {
    const sidecars = resets.get(`${v} /drain_listeners then /drain_listeners?graceful`);
    const other = resets.get(`${v} /drain_listeners?graceful then /drain_listeners`);
    assert.ok(sidecars !== undefined && other !== undefined, `${v}: both orders recorded`);
    assert.ok(
      sidecars <= other,
      `${v}: plain then graceful reset ${sidecars}, graceful then plain ${other}: docs/envoy.md's "Hence plain, then graceful" no longer holds`,
    );
  }
  assert.match(readFileSync(join(REPO_ROOT, 'docs', 'envoy.md'), 'utf8'), /on\nevery version it reset no more requests than the other order in the run above/);
});

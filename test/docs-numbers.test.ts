/**
 * Numbers in the README and docs/ held to where they come from (issue 49, item 2), for the figures
 * that drifted while copied by hand: the plan's timings of the bundled examples (docs/plan.md said
 * NLB's LB buffer was lbDetect + 40 s + margin, 76 s, where the plan computes 126 s) and the count of
 * lint rules ("24 rules" beside 26). The timings block is rendered from the plans of examples/
 * (GRACEGATE_UPDATE_DOCS=1 rewrites it); a count of rules anywhere must be the registry's.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { LINT_RULES } from '../src/lint/registry';
import { planGateway } from '../src/plan/plan-gateway';
import { parseGatewaySpec } from '../src/schema/parse-spec';
import { exampleSpecFiles } from './support/examples';
import { BENCH_DOC, readBenchResults, renderBench } from './support/bench-results';
import { REPO_ROOT } from './support/repo';

const PLAN_DOC = join(REPO_ROOT, 'docs', 'plan.md');

function exampleTimings(): string {
  const rows = exampleSpecFiles('GracefulGateway').map((file) => {
    const plan = planGateway(parseGatewaySpec(readFileSync(join(REPO_ROOT, 'examples', file), 'utf8'), file));
    const t = plan.timings;
    const buffer = plan.derivations.lbBufferSeconds;
    return `| \`examples/${file}\` | ${plan.loadBalancer.model} | ${plan.sequence} | ${t.lbDetectSeconds} s | ${t.lbBufferSeconds} s = \`${buffer.formula}\` | ${t.drainTimeoutSeconds} s | ${t.terminationGracePeriodSeconds} s |`;
  });
  return [
    '| example | LB | sequence | lbDetectSeconds | lbBufferSeconds | drainTimeoutSeconds | terminationGracePeriodSeconds |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

test("docs/plan.md's table of the examples' timings is what the planner computes now", () => {
  const doc = readFileSync(PLAN_DOC, 'utf8');
  const begin = doc.indexOf('<!-- example-timings:begin');
  const start = doc.indexOf('\n', begin) + 1;
  const end = doc.indexOf('<!-- example-timings:end -->');
  assert.ok(begin >= 0 && end >= start, 'docs/plan.md has the example-timings markers');
  const generated = exampleTimings();
  if (process.env.GRACEGATE_UPDATE_DOCS === '1') writeFileSync(PLAN_DOC, doc.slice(0, start) + generated + doc.slice(end));
  else assert.equal(doc.slice(start, end), generated, 'GRACEGATE_UPDATE_DOCS=1 node --test dist/test/docs-numbers.test.js');
  assert.match(generated, /\| nlb \| [\w-]+ \| \d+ s \| 126 s = `max\(lbDetectSeconds \+ propagationDelay, deregistrationLag\) \+ lbMargin`/);
});

test("a count of lint rules in the README or docs/ is the registry's", () => {
  const pages = [
    join(REPO_ROOT, 'README.md'),
    ...readdirSync(join(REPO_ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(REPO_ROOT, 'docs', f)),
  ];
  for (const page of pages) {
    for (const [claim, n] of readFileSync(page, 'utf8').matchAll(/\b(\d+) (?:lint )?rules\b/g))
      assert.equal(Number(n), LINT_RULES.length, `${page}: "${claim}"`);
  }
});

test('docs/benchmarks.md shows what each benchmark wrote to docs/benchmarks.json, and every block has its run', () => {
  const results = readBenchResults();
  let doc = readFileSync(BENCH_DOC, 'utf8');
  const names = [...doc.matchAll(/<!-- bench:([\w-]+):begin -->/g)].map((m) => m[1]!);
  assert.ok(names.length > 0, 'docs/benchmarks.md has bench blocks');
  for (const name of names) {
    const result = results[name];
    assert.ok(result, `docs/benchmarks.json has no '${name}': node dist/bench/<its bench>.js --write`);
    const begin = `<!-- bench:${name}:begin -->\n`;
    const end = `<!-- bench:${name}:end -->`;
    const at = doc.indexOf(begin) + begin.length;
    const generated = renderBench(result);
    if (process.env.GRACEGATE_UPDATE_DOCS === '1') doc = doc.slice(0, at) + generated + doc.slice(doc.indexOf(end));
    else assert.equal(doc.slice(at, doc.indexOf(end)), generated, 'GRACEGATE_UPDATE_DOCS=1 node --test dist/test/docs-numbers.test.js');
  }
  if (process.env.GRACEGATE_UPDATE_DOCS === '1') writeFileSync(BENCH_DOC, doc);
});

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { LINT_RULES, UNKNOWN_IGNORE_RULE } from '../../src/lint/registry';
import { REPO_ROOT } from '../support/repo';

/** docs/lint.md's rule list is the registry's own words: generated, and checked here. */
test("docs/lint.md lists every rule with its severity, summary and rationale (the registry's words)", () => {
  const rules = [...LINT_RULES, UNKNOWN_IGNORE_RULE];
  const generated = [
    '<!-- rules:begin (generated from src/lint/registry.ts by test/lint/docs.test.ts; GRACEGATE_UPDATE_DOCS=1 npm test -- lint/docs rewrites it) -->',
    ...rules.flatMap((r) => [`### \`${r.id}\` (${r.severity})`, '', `${r.summary}.`, '', r.rationale, '']),
    '<!-- rules:end -->',
  ].join('\n');
  const path = join(REPO_ROOT, 'docs', 'lint.md');
  const doc = readFileSync(path, 'utf8');
  const block = /<!-- rules:begin[\s\S]*?<!-- rules:end -->/;
  if (process.env.GRACEGATE_UPDATE_DOCS === '1') writeFileSync(path, doc.replace(block, generated));
  else assert.equal(block.exec(doc)?.[0], generated, 'docs/lint.md is out of date: GRACEGATE_UPDATE_DOCS=1 npm test -- lint/docs');
});

test('every rule says why with a source, and cites docs/facts.md sections that exist', () => {
  const facts = readFileSync(join(REPO_ROOT, 'docs', 'facts.md'), 'utf8');
  for (const r of LINT_RULES) {
    assert.match(r.id, /^[a-z0-9]+(-[a-z0-9]+)*$/);
    assert.match(
      r.rationale,
      /docs\/facts\.md §\d|docs\/(hc|envoy|manifests|plan)\.md|kubernetes|istio\/istio|kubernetes\.io|README/,
      `${r.id} names no source`,
    );
    for (const [, n] of r.rationale.matchAll(/docs\/facts\.md §(\d+)/g))
      assert.match(facts, new RegExp(`^## ${n}\\. `, 'm'), `${r.id}: docs/facts.md has no §${n}`);
  }
  assert.equal(new Set(LINT_RULES.map((r) => r.id)).size, LINT_RULES.length);
});

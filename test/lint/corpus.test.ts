import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dump, load } from 'js-yaml';
import { renderLintSarif } from '../../src/lint/format/sarif';
import { LINT_RULES, UNKNOWN_IGNORE_RULE } from '../../src/lint/registry';
import type { LintFinding } from '../../src/lint/rule';
import { CLI } from '../emit/helpers';
import { buildCorpus, EXPECTED, type CorpusInput } from './corpus';
import { lintText, optionsOf } from './helpers';
import { ALLOWED, multitoolValidate } from './sarif-validate';

/*
 * The corpus (test/lint/corpus.ts) against its expected-findings files: exactly the findings each
 * file lists (rule, object, field), each with the reason it is right, and the near misses it names
 * (rules that must not fire there, and why). GRACEGATE_UPDATE_CORPUS=1 rewrites the files from
 * this run, keeping every reason already written and marking new findings `why: TODO`, which fails
 * until a person has written why.
 */

type Expected = {
  input: string;
  flags: string[];
  findings: Array<{ rule: string; object: string; field: string; why: string }>;
  notExpected?: Array<{ rule: string; why: string }>;
};

/** The rules that judge the LB's side: each of their findings states the LB's view it stands on. */
export const LB_SIDE_RULES = ['readiness-on-lb-path', 'health-service-not-local', 'health-probe-bypasses-pod', 'proxy-hold-below-lb-detection'];

const work = mkdtempSync(join(tmpdir(), 'gracegate-lint-corpus-'));
after(() => rmSync(work, { recursive: true, force: true }));
let corpus: CorpusInput[] = [];
const results = new Map<string, LintFinding[]>();
before(() => {
  corpus = buildCorpus(work);
  for (const c of corpus) results.set(c.slug, lintText(c.text, c.file, optionsOf(c.flags)).findings);
});

const expectedFile = (c: CorpusInput) => join(EXPECTED, `${c.slug}.yaml`);
const readExpected = (c: CorpusInput): Expected | undefined =>
  existsSync(expectedFile(c)) ? (load(readFileSync(expectedFile(c), 'utf8')) as Expected) : undefined;
const key = (f: { rule: string; object: string; field: string }) => `${f.rule} ${f.object} ${f.field}`;

describe('gracegate lint on its corpus (issue 28): each input against its expected-findings file', () => {
  it('the corpus has every kind of input the issue names', () => {
    const names = corpus.map((c) => c.name);
    for (const want of [
      /^istio\/gateway 1\.26\.8 defaults$/,
      /^istio\/gateway 1\.27\.9 defaults$/,
      /^istio\/gateway 1\.30\.3 defaults$/,
      /^istio\/gateway 1\.31 defaults$/,
      /^istiod Gateway API golden simple\.yaml$/,
      /^hand-written article-w6$/,
      /^hand-written article-app$/,
      /^istiod Gateway API golden \+ gracegate \(gateway-api\.yaml\)$/,
      /^inference-api \+ gracegate post-render \(app-workload\.yaml\)$/,
    ])
      assert.ok(
        names.some((n) => want.test(n)),
        `${want} not in the corpus`,
      );
    // gracegate's own output for every example spec.
    for (const ex of ['citrix', 'envoy', 'f5', 'haproxy-soft-drain', 'haproxy', 'nlb', 'haproxy-autoscaled', 'gateway-api', 'app-workload'])
      assert.ok(
        names.some((n) => n.includes(`gracegate`) && n.includes(`(${ex}.yaml)`)),
        `no gracegate output for examples/${ex}.yaml`,
      );
  });

  it('every input gives exactly its expected findings (traps: their # expect: lines)', () => {
    const update = process.env.GRACEGATE_UPDATE_CORPUS === '1';
    const problems: string[] = [];
    for (const c of corpus) {
      const found = results.get(c.slug)!;
      if (c.inline) {
        assert.deepEqual(
          found.map((f) => ({ rule: f.rule, line: f.line })).sort((a, b) => a.line - b.line),
          c.inline,
          c.name,
        );
        continue;
      }
      const expected = readExpected(c);
      if (update) {
        const why = new Map((expected?.findings ?? []).map((f) => [key(f), f.why]));
        const next: Expected = {
          input: c.name,
          flags: c.flags.map((f) => f.replace(`${work}/`, '<corpus>/').replace(/^\/.*\/examples\//, 'examples/')),
          findings: found.map((f) => ({ rule: f.rule, object: f.object, field: f.field, why: why.get(key(f)) ?? 'TODO' })),
          ...(expected?.notExpected ? { notExpected: expected.notExpected } : {}),
        };
        writeFileSync(
          expectedFile(c),
          `# Expected findings of the corpus input '${c.name}', reviewed by hand: each with why it is right,\n# and the near misses that must not fire here. test/lint/corpus.test.ts holds lint to this file.\n${dump(next, { lineWidth: 160, noRefs: true })}`,
        );
        continue;
      }
      if (!expected) {
        problems.push(`${c.name}: no ${expectedFile(c)} (GRACEGATE_UPDATE_CORPUS=1 writes one to review)`);
        continue;
      }
      assert.deepEqual(found.map(key).sort(), expected.findings.map(key).sort(), `${c.name} (${expectedFile(c)})`);
      for (const f of expected.findings) if (!f.why || f.why === 'TODO') problems.push(`${c.name}: ${key(f)} has no reviewed reason`);
      for (const n of expected.notExpected ?? [])
        if (found.some((f) => f.rule === n.rule)) problems.push(`${c.name}: ${n.rule} fired, which must not (${n.why})`);
    }
    assert.deepEqual(problems, []);
  });

  it('each rule fires on at least one input and is named as a near miss, one that must not fire, on another', () => {
    const fires = new Set(corpus.flatMap((c) => results.get(c.slug)!.map((f) => f.rule)));
    const nearMiss = new Set(corpus.flatMap((c) => (readExpected(c)?.notExpected ?? []).map((n) => n.rule)));
    for (const rule of [...LINT_RULES, UNKNOWN_IGNORE_RULE]) {
      assert.ok(fires.has(rule.id), `${rule.id} fires on no corpus input`);
      assert.ok(nearMiss.has(rule.id), `${rule.id} is no input's near miss (notExpected)`);
    }
  });

  it("every LB-side finding states the LB's view it stands on, with the numbers, and no gracegate output has a finding", () => {
    for (const c of corpus) {
      for (const f of results.get(c.slug)!) {
        if (!LB_SIDE_RULES.includes(f.rule)) continue;
        // The hold against the LB's timing names where the timing came from; the probe where one is inferred.
        if (f.rule === 'proxy-hold-below-lb-detection') assert.match(f.message, /the LB \((--lb|--spec|Service\/)/, `${c.name}: ${key(f)}`);
        if (f.rule === 'proxy-hold-below-lb-detection' && !f.lbView) continue;
        assert.ok(f.lbView, `${c.name}: ${key(f)} has no lbView`);
        assert.ok(f.message.includes(f.lbView.statement), `${c.name}: ${key(f)} does not state ${f.lbView.statement}`);
        assert.match(f.lbView.statement, /^the LB probes /);
        assert.ok(f.numbers && Object.keys(f.numbers).length > 0, `${c.name}: ${key(f)} has no numbers`);
        assert.ok(f.lbView.line > 0);
      }
      if (/\+ gracegate/.test(c.name) && !/without|edited by hand/.test(c.name)) assert.deepEqual(results.get(c.slug)!.map(key), [], c.name);
    }
  });

  it('done when (issue 28): the article gateway with readiness on the LB path and a Cluster health Service, no sidecar, no --spec, no --lb: both findings name the Service the LB probes through, in text, JSON and SARIF', () => {
    const c = corpus.find((x) => x.name === 'hand-written article-w6-traps')!;
    const json = spawnSync(process.execPath, [CLI, 'lint', c.file, '--format', 'json'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(json.status, 1, json.stderr);
    const findings = JSON.parse(json.stdout).findings as LintFinding[];
    for (const rule of ['readiness-on-lb-path', 'health-service-not-local']) {
      const f = findings.find((x) => x.rule === rule)!;
      assert.ok(f, rule);
      assert.match(
        f.message,
        /the LB probes 18180 \(GET \/health_check\.html: the W6 design's LB endpoint[^)]*\) through Service\/istio-ingress\/igw-health NodePort 30180/,
      );
      assert.equal(f.lbView!.object, 'Service/istio-ingress/igw-health');
    }
    const text = spawnSync(process.execPath, [CLI, 'lint', c.file], { encoding: 'utf8', timeout: 30_000 });
    assert.match(text.stdout, /through Service\/istio-ingress\/igw-health NodePort 30180/);
    assert.match(text.stdout, /nodePort = 30180 {2}\(Service\/istio-ingress\/igw-health spec\.ports\[0\]\.nodePort\)/);
    const sarif = spawnSync(process.execPath, [CLI, 'lint', c.file, '--format', 'sarif'], { encoding: 'utf8', timeout: 30_000 });
    const results = JSON.parse(sarif.stdout).runs[0].results as Array<{
      ruleId: string;
      message: { text: string };
      relatedLocations?: Array<{ message?: { text: string } }>;
    }>;
    for (const rule of ['readiness-on-lb-path', 'health-service-not-local']) {
      const r = results.find((x) => x.ruleId === rule)!;
      assert.match(r.message.text, /Service\/istio-ingress\/igw-health NodePort 30180/);
      assert.ok(r.relatedLocations?.some((l) => /^the LB probes 18180/.test(l.message?.text ?? '')));
    }
  });

  it('the corpus in SARIF: every result of every input located on a line, valid to the real SARIF Multitool', () => {
    const logs: Record<string, string> = {};
    for (const c of corpus.filter((x) => !x.inline)) {
      const log = renderLintSarif(lintText(c.text, c.file, optionsOf(c.flags)), '0.1.0');
      for (const res of JSON.parse(log).runs[0].results)
        assert.ok(res.locations[0].physicalLocation.region.startLine > 0, `${c.name}: ${res.ruleId} has no line`);
      logs[c.slug] = log;
    }
    assert.deepEqual(
      multitoolValidate(logs).filter((v) => !ALLOWED.has(v.rule)),
      [],
    );
  });
});

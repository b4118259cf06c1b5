import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LintOptions } from '../../src/lint/context';
import { CLI, HELMS, helm } from '../emit/helpers';
import { gatewayChart } from '../support/fixtures';
import { REPO_ROOT } from '../support/repo';
import { renderChartFixtures, type ChartFixture } from './chart-fixtures';
import { comparisonTable, type ComparisonResults, kubeScore, kubeScoreSummary, type Observation, trapRows } from './comparison';
import { walkFixes } from './fix-walk';
import { lintText, optionsOf, specOptions, traps } from './helpers';

const work = mkdtempSync(join(tmpdir(), 'gracegate-lint-charts-'));
after(() => rmSync(work, { recursive: true, force: true }));

let fixtures: ChartFixture[] = [];
before(() => {
  fixtures = renderChartFixtures(work);
});

const rulesOf = (f: ChartFixture, options: LintOptions = {}) => [...new Set(lintText(f.text, f.file, options).findings.map((x) => x.rule))].sort();

describe('gracegate lint on the real charts (helm 3 renders)', () => {
  it('the defaults of istio/gateway 1.26.8, 1.27.9, 1.30.3 and of the in-house chart show their traps', () => {
    const defaults = fixtures.filter((f) => f.name.endsWith('defaults'));
    assert.equal(defaults.length, 4);
    // Beside the traps of the termination, the charts' defaults leave the pods to share a node with no
    // budget; istio/gateway's HPA (on by default) goes down to one pod. The in-house chart has no HPA.
    const common = ['health-service-not-local', 'pdb-missing', 'proxy-not-held', 'readiness-on-lb-path', 'replicas-may-share-node'];
    for (const f of defaults) assert.deepEqual(rulesOf(f), f.name.startsWith('istio/gateway') ? ['autoscale-min-one', ...common].sort() : common, f.name);
  });

  it('helm template igw <istio/gateway> | gracegate lint - prints the traps with their fixes, exit 1', () => {
    const rendered = helm(HELMS['helm 3.17'], ['template', 'igw', gatewayChart('1.27.9')]);
    const r = spawnSync(process.execPath, [CLI, 'lint', '-'], { input: rendered, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stdout, /Service\/default\/igw\n {2}WARNING health-service-not-local {2}spec\.type {2}stdin:\d+\n/);
    assert.match(r.stdout, /fix: set spec\.externalTrafficPolicy: Local/);
    assert.match(r.stdout, /Deployment\/default\/igw\n {2}ERROR {3}proxy-not-held/);
    assert.match(r.stdout, /fix: hold the proxy until the LB has stopped sending/);
  });

  it("every chart with gracegate's output (overlay or post-render, manifests.yaml, the filled-in NetworkPolicy) lints clean, with and without --spec", () => {
    const ours = fixtures.filter((f) => f.spec);
    assert.equal(ours.length, 2 * 6 + 1);
    for (const f of ours) {
      assert.deepEqual(rulesOf(f), [], f.name);
      assert.deepEqual(
        lintText(f.text, f.file, specOptions(f.spec!)).findings.map((x) => `${x.rule} ${x.object} ${x.field}: ${x.message}`),
        [],
        `${f.name} --spec`,
      );
    }
    const one = ours.find((f) => f.name.startsWith('istio/gateway 1.27.9 + gracegate (haproxy.yaml)'))!;
    const r = spawnSync(process.execPath, [CLI, 'lint', one.file, '--spec', one.spec!, '--format', 'json'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).findings, []);
  });

  it("plan-mismatch: a grace period changed by hand is found on its line, with the plan's formula, and its fix restores it", () => {
    const f = fixtures.find((x) => x.name === 'istio/gateway 1.27.9 + gracegate (haproxy.yaml)')!;
    const options = specOptions(f.spec!);
    const planned = options.plan!.plan.timings.terminationGracePeriodSeconds;
    const text = f.text.replace(`terminationGracePeriodSeconds: ${planned}`, 'terminationGracePeriodSeconds: 30');
    const line = text.split('\n').findIndex((l) => l.includes('terminationGracePeriodSeconds: 30')) + 1;
    const findings = lintText(text, f.file, options).findings;
    assert.deepEqual(
      findings.map((x) => [x.rule, x.field, x.line]),
      [['plan-mismatch', 'spec.template.spec.terminationGracePeriodSeconds', line]],
    );
    assert.equal(findings[0]!.formula, options.plan!.plan.derivations.terminationGracePeriodSeconds.formula);
    assert.deepEqual(findings[0]!.fix!.edits[0]!, {
      object: 'Deployment/istio-ingress/igw-public',
      path: ['spec', 'template', 'spec', 'terminationGracePeriodSeconds'],
      set: planned,
    });
    walkFixes(text, options);
  });

  it("plan-mismatch reads proxy.istio.io/config as Istio does: key by key, durations by value, the user's own keys kept", () => {
    const f = fixtures.find((x) => x.name === 'istio/gateway 1.27.9 + gracegate (haproxy.yaml)')!;
    const options = specOptions(f.spec!);
    const line = f.text.split('\n').find((l) => l.includes('proxy.istio.io/config:'))!;
    // The plan's stats suffixes (they grow as the sidecar and the alerts read more of Envoy's stats).
    const suffixes: string[] = JSON.parse(options.plan!.changes.podAnnotations['proxy.istio.io/config']!).proxyStatsMatcher.inclusionSuffixes;
    const same = `${line.slice(0, line.indexOf('proxy.istio.io/config:'))}proxy.istio.io/config: '{drainDuration: 0m45s, terminationDrainDuration: 5.0s, tracing: {sampling: 1}, proxyStatsMatcher: {inclusionSuffixes: [${suffixes.join(', ')}]}}'`;
    assert.deepEqual(lintText(f.text.replace(line, same), f.file, options).findings, []);
    const longer = same.replace('5.0s', '30s');
    const findings = lintText(f.text.replace(line, longer), f.file, options).findings;
    assert.deepEqual(
      findings.map((x) => x.rule),
      ['plan-mismatch'],
    );
    assert.match(
      findings[0]!.message,
      /^proxy\.istio\.io\/config terminationDrainDuration: the manifest has \{"terminationDrainDuration":"30s"\}, the plan \{"terminationDrainDuration":"5s"\}/,
    );
    assert.deepEqual(JSON.parse((findings[0]!.fix!.edits[0] as { set: string }).set), {
      drainDuration: '45s',
      terminationDrainDuration: '5s',
      tracing: { sampling: 1 },
      proxyStatsMatcher: { inclusionSuffixes: suffixes },
    });
    walkFixes(f.text.replace(line, longer), options);
  });

  it('plan-mismatch on the default chart: every field the plan owns is named, and walking the fixes leaves only the objects to apply', () => {
    const f = fixtures.find((x) => x.name === 'istio/gateway 1.27.9 + gracegate (haproxy.yaml)')!;
    const rendered = helm(HELMS['helm 3.17'], [
      'template',
      'igw-public',
      gatewayChart('1.27.9'),
      '--namespace',
      'istio-ingress',
      '--set',
      'autoscaling.enabled=false',
    ]);
    const options = specOptions(f.spec!);
    const findings = lintText(rendered, 'default.yaml', options).findings;
    const fields = findings.filter((x) => x.rule === 'plan-mismatch').map((x) => x.field);
    for (const want of [
      'spec.strategy',
      'spec.minReadySeconds',
      'spec.template.spec.terminationGracePeriodSeconds',
      'spec.template.spec.affinity.podAntiAffinity',
      'spec.template.spec.containers[1]',
      'spec.template.spec.containers[0].lifecycle.preStop',
      'spec.template.metadata.annotations.proxy.istio.io/config',
    ]) {
      assert.ok(fields.includes(want), `${want} not among ${fields.join(', ')}`);
    }
    assert.ok(findings.some((x) => /ConfigMap\/istio-ingress\/igw-public-gracegate-hc is not in the input/.test(x.message)));
    walkFixes(rendered, options);
  });

  it("the fixes of the defaults' findings never go in a circle", () => {
    for (const f of fixtures.filter((x) => x.name.endsWith('defaults'))) walkFixes(f.text, {});
  });
});

describe("beside kube-score, on the same files in the same run (docs/lint.md's table)", () => {
  it('the table in docs/lint.md is what this run finds; no rule is one kube-linter has', () => {
    const observations: Observation[] = [
      ...fixtures.map((f) => ({
        fixture: f.name,
        findings: lintText(f.text, f.file, f.spec ? specOptions(f.spec) : {}).findings,
        kubeScore: kubeScore(f.file),
      })),
      ...traps().map((t) => {
        const file = join(work, `${t.rule}.yaml`);
        writeFileSync(file, t.text);
        return { fixture: `trap manifest \`${t.rule}\``, findings: lintText(t.text, file, optionsOf(t.flags)).findings, kubeScore: kubeScore(file) };
      }),
    ];
    // kube-score did run: it reports its own kind of findings on the default chart.
    assert.ok(observations[0]!.kubeScore.some((o) => o.checks.some((c) => !c.skipped && c.grade < 10)));
    // plan-mismatch on the real chart, for the table.
    const f = fixtures.find((x) => x.name === 'istio/gateway 1.27.9 + gracegate (haproxy.yaml)')!;
    const drifted = join(work, 'drifted.yaml');
    const options = specOptions(f.spec!);
    writeFileSync(
      drifted,
      f.text.replace(`terminationGracePeriodSeconds: ${options.plan!.plan.timings.terminationGracePeriodSeconds}`, 'terminationGracePeriodSeconds: 30'),
    );
    observations.push({
      fixture: 'istio/gateway 1.27.9 + gracegate, grace period edited by hand (--spec)',
      findings: lintText(readFileSync(drifted, 'utf8'), drifted, options).findings,
      kubeScore: kubeScore(drifted),
    });

    // The results file holds what the table shows: the traps from this run, the speed from the bench.
    const resultsPath = join(REPO_ROOT, 'docs', 'lint-comparison.json');
    const results = JSON.parse(readFileSync(resultsPath, 'utf8')) as ComparisonResults;
    const rows = trapRows(observations);
    if (process.env.GRACEGATE_UPDATE_DOCS === '1') writeFileSync(resultsPath, `${JSON.stringify({ ...results, traps: rows }, null, 2)}\n`);
    else assert.deepEqual(results.traps, rows, 'docs/lint-comparison.json is out of date: GRACEGATE_UPDATE_DOCS=1 npm test -- lint/charts');
    const generated = [
      '<!-- comparison:begin (generated from docs/lint-comparison.json by test/lint/charts.test.ts; GRACEGATE_UPDATE_DOCS=1 npm test -- lint/charts rewrites both) -->',
      comparisonTable({ ...results, traps: rows }),
      '',
      'What each tool reports on the real charts in the same run:',
      '',
      kubeScoreSummary(
        observations,
        fixtures.filter((x) => x.name.endsWith('defaults') || x.name.includes('(haproxy.yaml)')).map((x) => x.name),
      ),
      '<!-- comparison:end -->',
    ].join('\n');
    const docPath = join(REPO_ROOT, 'docs', 'lint.md');
    const doc = readFileSync(docPath, 'utf8');
    const block = /<!-- comparison:begin[\s\S]*?<!-- comparison:end -->/;
    if (process.env.GRACEGATE_UPDATE_DOCS === '1') writeFileSync(docPath, doc.replace(block, generated));
    else assert.equal(block.exec(doc)?.[0], generated, 'docs/lint.md is out of date: GRACEGATE_UPDATE_DOCS=1 npm test -- lint/charts');
    // Every rule was seen in this run, and none is a check kube-linter has (its list, v0.8.3).
    for (const line of generated.split('\n').filter((l) => l.startsWith('| `'))) {
      assert.doesNotMatch(line, /\| not seen \|/, line);
      assert.doesNotMatch(line, /\| yes[^|]*\|$/, line);
      assert.doesNotMatch(line, /\| yes[^|]*\| [^|]*\|$/, line);
    }
  });
});

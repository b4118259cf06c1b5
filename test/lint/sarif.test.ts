import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderLintSarif } from '../../src/lint/format/sarif';
import { LINT_RULES } from '../../src/lint/registry';
import { runCli } from '../support/run-cli';
import { lintText, optionsOf, traps } from './helpers';

import { ALLOWED, multitoolValidate } from './sarif-validate';

describe('gracegate lint --format sarif', () => {
  it('the validator rejects what is not SARIF (it can fail)', () => {
    const verdicts = multitoolValidate({
      'no-driver-name': JSON.stringify({ version: '2.1.0', runs: [{ tool: { driver: {} } }] }),
      'wrong-version': JSON.stringify({ version: '2.0.0', runs: [] }),
    });
    for (const name of ['no-driver-name.sarif', 'wrong-version.sarif']) {
      assert.ok(
        verdicts.some((v) => v.file === name && v.level === 'error'),
        `${name}: ${JSON.stringify(verdicts)}`,
      );
    }
  });

  it("every trap's log, a suppressed one and an absolute file name: valid SARIF 2.1.0 by the Multitool", () => {
    const logs: Record<string, string> = {};
    for (const trap of traps()) logs[trap.rule] = renderLintSarif(lintText(trap.text, `test/lint/traps/${trap.rule}.yaml`, optionsOf(trap.flags)), '0.1.0');
    const held = traps().find((t) => t.rule === 'proxy-not-held')!;
    const suppressed = held.text.replace(
      'metadata: {name: gw, namespace: ingress}',
      'metadata:\n  name: gw\n  namespace: ingress\n  annotations: {gracegate.dev/ignore: proxy-not-held}',
    );
    logs['suppressed'] = renderLintSarif(lintText(suppressed, 'my charts/out put.yaml'), '0.1.0');
    logs['absolute'] = renderLintSarif(lintText(held.text, '/srv/rendered charts/gateway.yaml'), '0.1.0');
    // One log holding every run: the Multitool's cost is per file (~0.35 s of CPU each).
    const names = Object.keys(logs);
    const all = { ...JSON.parse(logs[names[0]!]!), runs: names.flatMap((n) => JSON.parse(logs[n]!).runs) };
    const verdicts = multitoolValidate({ all: JSON.stringify(all, null, 2) });
    assert.deepEqual(
      verdicts
        .filter((v) => !ALLOWED.has(v.rule))
        .map((v) => ({ ...v, log: /runs\[(\d+)\]/.exec(v.message)?.[1] ?? '' }))
        .map((v) => ({ ...v, log: names[Number(v.log)] ?? v.log })),
      [],
    );
    assert.equal(
      JSON.parse(logs['absolute']!).runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri,
      'file:///srv/rendered%20charts/gateway.yaml',
    );
  });

  for (const trap of traps()) {
    it(`${trap.rule}: each result on the line of its field`, () => {
      const report = lintText(trap.text, `test/lint/traps/${trap.rule}.yaml`, optionsOf(trap.flags));
      const log = JSON.parse(renderLintSarif(report, '0.1.0'));
      const results = log.runs[0].results as Array<any>;
      assert.deepEqual(
        results.map((r) => ({ rule: r.ruleId, line: r.locations[0].physicalLocation.region.startLine })).sort((a, b) => a.line - b.line),
        trap.expected,
      );
      for (const r of results) {
        assert.equal(r.locations[0].physicalLocation.artifactLocation.uri, `test/lint/traps/${trap.rule}.yaml`);
        assert.equal(log.runs[0].tool.driver.rules[r.ruleIndex].id, r.ruleId);
      }
    });
  }

  it('every rule is described (rationale as help), suppressed results carry an in-source suppression, names are URI-encoded', () => {
    const trap = traps().find((t) => t.rule === 'proxy-not-held')!;
    const text = trap.text.replace(
      'metadata: {name: gw, namespace: ingress}',
      'metadata:\n  name: gw\n  namespace: ingress\n  annotations: {gracegate.dev/ignore: proxy-not-held}',
    );
    const log = JSON.parse(renderLintSarif(lintText(text, 'my charts/out put.yaml'), '0.1.0'));
    const driver = log.runs[0].tool.driver;
    assert.ok(LINT_RULES.every((r) => driver.rules.some((d: any) => d.id === r.id && d.fullDescription.text === r.rationale)));
    const [result] = log.runs[0].results;
    assert.deepEqual(result.suppressions, [{ kind: 'inSource', justification: 'gracegate.dev/ignore: proxy-not-held: no gracegate.dev/ignore-reason given' }]);
    assert.equal(result.locations[0].physicalLocation.artifactLocation.uri, 'my%20charts/out%20put.yaml');
  });

  it('the CLI prints the same SARIF for stdin, named with --stdin-name, valid by the Multitool', () => {
    const trap = traps().find((t) => t.rule === 'grace-period-short')!;
    const r = runCli(['lint', '-', ...trap.flags, '--format', 'sarif', '--stdin-name', 'rendered/gateway.yaml'], { input: trap.text });
    assert.equal(r.status, 1, r.stderr);
    assert.deepEqual(
      multitoolValidate({ stdin: r.stdout }).filter((v) => !ALLOWED.has(v.rule)),
      [],
    );
    const log = JSON.parse(r.stdout);
    assert.equal(log.runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri, 'rendered/gateway.yaml');
    assert.equal(log.runs[0].results[0].locations[0].physicalLocation.region.startLine, trap.expected[0]!.line);
  });
});

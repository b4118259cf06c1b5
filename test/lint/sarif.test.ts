import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Ajv from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { renderLintSarif } from '../../src/lint/format/sarif';
import { LINT_RULES } from '../../src/lint/registry';
import { REPO_ROOT } from '../support/repo';
import { runCli } from '../support/run-cli';
import { lintText, optionsOf, traps } from './helpers';

/** The official SARIF 2.1.0 schema (OASIS, errata01), vendored with its license: test/fixtures/sarif/README.md. */
const schema = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'sarif', 'sarif-schema-2.1.0.json'), 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(schema);

function valid(log: unknown): void {
  const ok = validate(log);
  assert.ok(ok, JSON.stringify(validate.errors?.slice(0, 5), null, 2));
}

describe('gracegate lint --format sarif', () => {
  it('the schema validator rejects what is not SARIF (it can fail)', () => {
    assert.equal(validate({ version: '2.1.0', runs: [{ tool: { driver: {} } }] }), false);
    assert.equal(validate({ version: '2.0.0', runs: [] }), false);
  });

  for (const trap of traps()) {
    it(`${trap.rule}: valid SARIF 2.1.0, each result on the line of its field`, () => {
      const report = lintText(trap.text, `test/lint/traps/${trap.rule}.yaml`, optionsOf(trap.flags));
      const log = JSON.parse(renderLintSarif(report, '0.1.0'));
      valid(log);
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
    valid(log);
    const driver = log.runs[0].tool.driver;
    assert.ok(LINT_RULES.every((r) => driver.rules.some((d: any) => d.id === r.id && d.fullDescription.text === r.rationale)));
    const [result] = log.runs[0].results;
    assert.deepEqual(result.suppressions, [{ kind: 'inSource', justification: 'gracegate.dev/ignore: proxy-not-held: no gracegate.dev/ignore-reason given' }]);
    assert.equal(result.locations[0].physicalLocation.artifactLocation.uri, 'my%20charts/out%20put.yaml');
  });

  it('the CLI prints the same SARIF for stdin, named with --stdin-name', () => {
    const trap = traps().find((t) => t.rule === 'grace-period-short')!;
    const r = runCli(['lint', '-', ...trap.flags, '--format', 'sarif', '--stdin-name', 'rendered/gateway.yaml'], { input: trap.text });
    assert.equal(r.status, 1, r.stderr);
    const log = JSON.parse(r.stdout);
    valid(log);
    assert.equal(log.runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri, 'rendered/gateway.yaml');
    assert.equal(log.runs[0].results[0].locations[0].physicalLocation.region.startLine, trap.expected[0]!.line);
  });
});

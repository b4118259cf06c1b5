import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';
import { testDir } from '../support/tmp';

/**
 * The SARIF Multitool's `validate` (Microsoft's reference validator, from the npm registry's
 * @microsoft/sarif-multitool-linux, unpacked by scripts/prepare-test-env.sh): the SARIF 2.1.0
 * schema and the SARIF rules (SARIF1xxx errors, SARIF2xxx warnings and notes).
 */
const MULTITOOL = join(REPO_ROOT, '.cache/tools/sarif-multitool-5.7.0/Sarif.Multitool');

export type Verdict = { file: string; rule: string; level: string; message: string };

/** Every complaint the Multitool has about the given SARIF logs, one run for them all. */
export function multitoolValidate(logs: Record<string, string>): Verdict[] {
  if (!existsSync(MULTITOOL)) throw new Error(`${MULTITOOL} missing: run bash scripts/prepare-test-env.sh`);
  const dir = testDir('gracegate-sarif-');
  const files = Object.entries(logs).map(([name, text]) => {
    const file = join(dir, `${name}.sarif`);
    writeFileSync(file, text);
    return file;
  });
  const out = join(dir, 'validation.sarif.json');
  const r = spawnSync(MULTITOOL, ['validate', ...files, '--output', out], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  const results = (JSON.parse(readFileSync(out, 'utf8')).runs[0].results ?? []) as Array<any>;
  return results.map((v) => ({
    file: decodeURIComponent(String(v.locations?.[0]?.physicalLocation?.artifactLocation?.uri ?? '')).replace(/^.*\//, ''),
    rule: v.ruleId,
    level: v.level ?? 'warning',
    message: v.message.text ?? (v.message.arguments ?? []).join(', '),
  }));
}

/**
 * SARIF2005 asks for the tool's `informationUri`: gracegate has no public home page to name there.
 * It is a warning (a "should"), the only one allowed.
 */
export const ALLOWED = new Set(['SARIF2005']);

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVIDENCE } from '../../src/model/evidence';
import { REPO_ROOT } from '../support/repo';

/** GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');
}

test("every finding's evidence link points at a section that exists in a shipped document", () => {
  for (const link of Object.values(EVIDENCE)) {
    const [file, section] = link.split('#');
    const text = readFileSync(join(REPO_ROOT, file!), 'utf8');
    const anchors = text
      .split('\n')
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => anchor(l.replace(/^#+ /, '')));
    assert.ok(anchors.includes(section!), `${link}: no such section (sections: ${anchors.join(', ')})`);
  }
});

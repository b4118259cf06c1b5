import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { walkFixes } from './fix-walk';
import { optionsOf, traps } from './helpers';

describe('gracegate lint: fixes never go in a circle (each trap manifest)', () => {
  let total = 0;
  for (const trap of traps()) {
    it(trap.rule, () => {
      total += walkFixes(trap.text, optionsOf(trap.flags));
    });
  }
  it('walked at least one fix per rule that has one', () => {
    assert.ok(total >= 14, `only ${total} fixes walked`);
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { renderPlanText } from '../../src/emit/plan-text';
import { textWidth, wrapLine } from '../../src/emit/wrap';
import { planGateway } from '../../src/plan/plan-gateway';
import { TERMINATION_EVENTS } from '../../src/contract/hc';
import { parseGatewaySpec } from '../../src/schema/parse-spec';
import { readFileSync } from 'node:fs';
import { REPO_ROOT } from '../support/repo';
import { runCli } from '../support/run-cli';
import { exampleSpecFiles } from '../support/examples';

const plans = exampleSpecFiles('GracefulGateway').map((f) => planGateway(parseGatewaySpec(readFileSync(join(REPO_ROOT, 'examples', f), 'utf8'), f)));
const words = (text: string) => text.split(/\s+/).filter((w) => w !== '');

test('the plan text wraps to the width: no line longer unless it is one word, and no word lost or reordered', () => {
  for (const plan of plans) {
    const unwrapped = renderPlanText(plan, { width: 100_000 });
    for (const width of [60, 80, 120]) {
      const text = renderPlanText(plan, { width });
      for (const line of text.split('\n')) {
        if (line.length > width) assert.equal(words(line).length, 1, `${plan.gateway.name} at ${width}: '${line}'`);
      }
      assert.deepEqual(words(text), words(unwrapped), `${plan.gateway.name} at ${width}`);
    }
  }
  // The 900-character finding of the issue is now many lines.
  const longest = (w: number) =>
    Math.max(
      ...renderPlanText(plans[0]!, { width: w })
        .split('\n')
        .map((l) => l.length),
    );
  assert.ok(longest(100_000) > 400 && longest(80) <= 80 + 30, `longest line: ${longest(100_000)} unwrapped, ${longest(80)} at 80`);
});

test('a wrapped line continues under its own text (hanging indent), and aligned columns keep their spaces', () => {
  assert.deepEqual(wrapLine('label      one two three four five', 20, 11), ['label      one two', '           three', '           four five']);
  assert.deepEqual(wrapLine('  short', 20, 4), ['  short']);
  assert.deepEqual(wrapLine('a averyveryverylongwordindeed b', 10, 2), ['a', '  averyveryverylongwordindeed', '  b']);
  const haproxy = planGateway(parseGatewaySpec(readFileSync(join(REPO_ROOT, 'examples/haproxy.yaml'), 'utf8')));
  const lines = renderPlanText(haproxy, { width: 80 }).split('\n');
  const finding = lines.findIndex((l) => /^ {2}info +drain-first-cuts-connects-at-down/.test(l));
  assert.match(lines[finding + 1]!, /^ {10}\S/, 'a finding continues under its id');
  assert.doesNotMatch(lines[finding + 1]!, /^ {10}fix:/, 'the message wrapped');
});

test('the timeline says what [1]..[6] are, and what ≤ means', () => {
  const text = renderPlanText(plans[0]!, { width: 100 });
  const legend = text.slice(text.indexOf('[1]..[6] are'), text.indexOf('at the latest') + 'at the latest'.length).replace(/\s+/g, ' ');
  for (const { id, title } of TERMINATION_EVENTS) assert.ok(legend.includes(`[${id}] ${title}`), `[${id}] ${title}`);
  assert.match(legend, /≤ means at the latest/);
});

test("the width: the terminal's, else COLUMNS, else 100, within 60-200; plan honours it when piped", () => {
  assert.equal(textWidth({ isTTY: true, columns: 132 }, {}), 132);
  assert.equal(textWidth({ isTTY: false }, { COLUMNS: '90' }), 90);
  assert.equal(textWidth({}, {}), 100);
  assert.equal(textWidth({ isTTY: true, columns: 20 }, {}), 60);
  assert.equal(textWidth({}, { COLUMNS: '500' }), 200);
  const lengths = (env: NodeJS.ProcessEnv) =>
    runCli(['plan', 'examples/haproxy.yaml'], { env })
      .stdout.split('\n')
      .map((l) => l.length);
  assert.ok(Math.max(...lengths({ COLUMNS: '' })) <= 100);
  assert.ok(Math.max(...lengths({ COLUMNS: '70' })) <= 70 + 40);
  assert.ok(lengths({ COLUMNS: '70' }).length > lengths({ COLUMNS: '' }).length);
});

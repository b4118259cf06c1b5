import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { renderPlanSvg } from '../../src/emit/plan-svg';
import { TERMINATION_EVENTS } from '../../src/contract/hc';
import type { Plan } from '../../src/plan/plan-gateway';
import { exampleSpecFiles } from '../support/examples';
import { REPO_ROOT } from '../support/repo';
import { runCli } from '../support/run-cli';
import { example } from './helpers';
import { PLAN_PICTURES, picturePath, pngOf } from './plan-pictures';

const GATEWAYS = exampleSpecFiles('GracefulGateway');

/** Every text in the document (labels and tooltips), entities decoded: what a reader sees. */
function texts(svg: string): string[] {
  const out: string[] = [];
  const walk = (node: unknown): void => {
    if (typeof node === 'string' || typeof node === 'number') out.push(String(node));
    else if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object')
      Object.entries(node).forEach(([k, v]) => {
        if (!k.startsWith('@_')) walk(v);
      });
  };
  walk(new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_' }).parse(svg));
  return out;
}

const secs = (s: number): string => `${Math.round(s * 100) / 100} s`;

function assertPicture(plan: Plan, svg: string, name: string): void {
  assert.equal(XMLValidator.validate(svg), true, `${name}: the SVG parses`);
  const root = new XMLParser({ ignoreAttributes: false }).parse(svg) as Record<string, unknown>;
  assert.deepEqual(Object.keys(root), ['svg'], `${name}: one SVG document`);
  const all = texts(svg).join('\n');
  for (const lane of ['Kubernetes / pod', 'Load balancer', 'Waits']) assert.ok(all.includes(lane), `${name}: lane ${lane}`);
  for (const e of TERMINATION_EVENTS) {
    const entry = plan.timeline.entries.find((x) => x.event === e.id)!;
    assert.ok(all.includes(`[${e.id}] ${e.title} ${entry.bound === 'by' ? '≤ ' : ''}${secs(entry.atSeconds)}`), `${name}: event [${e.id}] at its time`);
  }
  for (const m of ['SIGTERM to the proxy container', 'Envoy exits', 'SIGKILL deadline']) assert.ok(all.includes(m), `${name}: ${m}`);
  const t = plan.timings;
  for (const [wait, value] of [
    ['LB detection', t.lbDetectSeconds],
    ['LB buffer', t.lbBufferSeconds],
    ['drain timeout', t.drainTimeoutSeconds],
    ["Envoy's exit", t.terminationDrainDurationSeconds],
    ['grace period', t.terminationGracePeriodSeconds],
  ] as const) {
    assert.ok(all.includes(`${wait} ${secs(value)}`), `${name}: the wait ${wait} with its number ${value}`);
  }
}

describe('the plan as a picture (plan --format svg, synth plan.svg)', () => {
  it('every example gateway: one SVG that parses, both clocks, the six events at their times, each wait with its number', () => {
    assert.ok(GATEWAYS.length >= 5, GATEWAYS.join(', '));
    for (const f of GATEWAYS) {
      const { plan } = example(f);
      assertPicture(plan, renderPlanSvg(plan), f);
    }
  });

  it('drain-first behind a flushing LB shows the race its findings predict; soft-drain with retry-on shows none', () => {
    const drainFirst = example('haproxy.yaml').plan;
    assert.equal(drainFirst.sequence, 'drain-first');
    const raced = texts(renderPlanSvg(drainFirst)).join('\n');
    assert.ok(drainFirst.findings.some((f) => f.id === 'drain-first-cuts-connects-at-down'));
    assert.match(raced, /race at DOWN \[5\]: drain-first-cuts-connects-at-down/);
    const soft = example('haproxy-soft-drain.yaml').plan;
    assert.equal(soft.sequence, 'soft-drain');
    const expected = soft.findings.filter((f) => f.expectedLoss !== undefined && f.expectedLoss !== 'none');
    const softText = texts(renderPlanSvg(soft)).join('\n');
    if (expected.length === 0) assert.match(softText, /no race: the plan's findings predict no loss/);
    else for (const f of expected) assert.ok(softText.includes(f.id), f.id);
  });

  it('gracegate plan --format svg prints the same document; a workload spec is refused by name', () => {
    const r = runCli(['plan', join(REPO_ROOT, 'examples', 'haproxy.yaml'), '--format', 'svg', '--fail-on', 'none']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, renderPlanSvg(example('haproxy.yaml').plan));
    const w = runCli(['plan', join(REPO_ROOT, 'examples', 'app-workload.yaml'), '--format', 'svg']);
    assert.equal(w.status, 2);
    assert.match(w.stderr, /--format svg draws a GracefulGateway's two clocks/);
  });

  it('synth writes plan.svg beside PLAN.md, and PLAN.md shows it', () => {
    const out = mkdtempSync(join(tmpdir(), 'gg-plan-svg-'));
    try {
      const r = runCli(['synth', join(REPO_ROOT, 'examples', 'haproxy-soft-drain.yaml'), '--out', out]);
      assert.equal(r.status, 0, r.stderr);
      const svg = readFileSync(join(out, 'plan.svg'), 'utf8');
      assertPicture(example('haproxy-soft-drain.yaml').plan, svg, 'synth plan.svg');
      assert.match(readFileSync(join(out, 'PLAN.md'), 'utf8'), /## Timeline\n\n.*\n\n!\[The timeline[^\]]*\]\(plan\.svg\)/);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it("the README's picture of each sequence is what the renderer makes of its example now", () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    for (const p of PLAN_PICTURES) {
      const { plan } = example(p.example);
      assert.equal(plan.sequence, p.sequence, p.example);
      assert.equal(readFileSync(picturePath(p.file), 'utf8'), renderPlanSvg(plan), `${p.file} is stale: node dist/test/emit/plan-pictures-main.js`);
      assert.ok(readme.includes(`](${pngOf(p.file)})`), `README links ${pngOf(p.file)}, the screenshot of ${p.file}`);
    }
  });
});

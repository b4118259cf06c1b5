/**
 * Every SVG gracegate writes, as a person sees it (issue 49, item 7): laid out by headless
 * Chromium (Debian's package, one browser, every picture in one page), each label's box taken from
 * the live layout (getBBox), and the test fails where a label sits on another label, a line runs
 * through a label, or a label is cut off at the picture's edge. The pictures: the plan's timeline
 * of every example gateway (`plan --format svg`, synth's plan.svg), verify's timeline (commands
 * only, and with two pods' events), and every SVG under docs/ (the sequences' timelines, the
 * end-to-end runs' timelines, the architecture). Then the README's PNG screenshots: each is the
 * screenshot of the SVG committed beside it (docs/timeline/screenshots.json).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TERMINATION_EVENTS } from '../src/contract/hc';
import { renderPlanSvg } from '../src/emit/plan-svg';
import { planGateway } from '../src/plan/plan-gateway';
import { parseGatewaySpec } from '../src/schema/parse-spec';
import type { RequestRecord } from '../src/verify/load';
import { parseStateAnswer, type PodStateSample } from '../src/verify/pod-state';
import { verifyReport } from '../src/verify/report';
import type { VerifyRun } from '../src/verify/run-verify';
import { summarize } from '../src/verify/summary';
import { renderVerifySvg } from '../src/verify/timeline-svg';
import { PLAN_PICTURES, picturePath, pngSize, SCREENSHOTS, sha256, svgSize, type ScreenshotManifest } from './emit/plan-pictures';
import { startChromium, type Chromium } from './support/chromium';
import { exampleSpecFiles } from './support/examples';
import { REPO_ROOT } from './support/repo';
import { collisions, layoutOf, outside, type Layout } from './support/svg-layout';

/** The plan's timeline of every example gateway. */
function planPictures(): Array<{ name: string; svg: string }> {
  return exampleSpecFiles('GracefulGateway').map((file) => ({
    name: `plan --format svg examples/${file}`,
    svg: renderPlanSvg(planGateway(parseGatewaySpec(readFileSync(join(REPO_ROOT, 'examples', file), 'utf8'), file))),
  }));
}

/** verify's timeline of a run whose commands end close together, without and with two pods' events. */
function verifyPictures(): Array<{ name: string; svg: string }> {
  const T0 = Date.parse('2026-12-01T10:00:00.000Z');
  const paths = { slow: () => '/', stream: () => '/' };
  const records: RequestRecord[] = Array.from({ length: 200 }, (_, i) => ({
    spec: { kind: 'slow' as const, ms: 50 },
    startMs: T0 - 1000 + i * 25,
    endMs: T0 - 950 + i * 25,
    outcome: i === 120 ? ('ECONNRESET' as const) : ('ok' as const),
    worker: i % 4,
    clientPort: 40000 + i,
    reusedConnection: i % 2 === 0,
  }));
  const run: VerifyRun = {
    records,
    paths,
    loadStartMs: T0 - 1000,
    loadEndMs: T0 + 4000,
    terminationAt: T0,
    stoppedBy: 'observe',
    terminate: { flag: '--terminate', command: 'kubectl delete pod igw-a --wait=false', startMs: 1000, endMs: 1150, code: 0, signal: null, output: '' },
    observe: { flag: '--observe', command: 'kubectl wait --for=delete pod/igw-a', startMs: 1150, endMs: 4200, code: 0, signal: null, output: '' },
  };
  const meta = {
    url: 'https://staging-gw.example.com/healthz',
    scenario: 's5',
    load: { ratePerSecond: 20, connections: 4, durationMs: 5000, requestTimeoutMs: 30_000 },
  };
  const state = (at: Array<number | null>) =>
    JSON.stringify({
      state: 'CLOSED',
      flow: 'drain-first',
      sequence: 'drain-first',
      inFlight: 0,
      reason: 'x',
      events: TERMINATION_EVENTS.map((t, i) => ({
        id: t.id,
        name: t.name,
        at: at[i] === null ? null : new Date(T0 + at[i]!).toISOString(),
        estimated: t.estimated,
      })),
    });
  // drain-first: [3] first, [4] at zero, [1] and [2] together, [5] and [6] (estimated) together; a second pod a little later.
  const last = new Map<string, PodStateSample>([
    ['igw-a', { answer: parseStateAnswer(state([2100, 2100, 120, 1800, 2600, 2600])), answeredAt: T0 + 3000 }],
    ['igw-b', { answer: parseStateAnswer(state([2300, 2350, 300, 1900, 2800, 2800])), answeredAt: T0 + 3000 }],
  ]);
  const polling = { namespace: 'istio-ingress', selector: 'app=igw', intervalMs: 1000, sequenceIntervalMs: 250, polls: 9, failures: 0, lastError: null };
  const summary = summarize(records, T0, paths, null);
  return [
    { name: 'verify --report timeline.svg', svg: renderVerifySvg(verifyReport(run, summary, meta)) },
    { name: 'verify --report --pod-state timeline.svg', svg: renderVerifySvg(verifyReport(run, summary, meta, { pods: ['igw-a', 'igw-b'], last, polling })) },
  ];
}

/** Every SVG under docs/. */
function docsPictures(dir = join(REPO_ROOT, 'docs')): Array<{ name: string; svg: string }> {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => {
      const full = join(dir, f);
      if (statSync(full).isDirectory()) return docsPictures(full);
      return f.endsWith('.svg') ? [{ name: relative(REPO_ROOT, full), svg: readFileSync(full, 'utf8') }] : [];
    });
}

/** Two labels on each other and a line through a third: what the check must find. */
const PLANTED = `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="100" viewBox="0 0 300 100" font-family="sans-serif" font-size="11">
<text x="10" y="20">first label</text><text x="30" y="22">second label</text>
<line x1="60" y1="40" x2="60" y2="80" stroke="#000"/><text x="20" y="64">crossed label</text>
<text x="250" y="95">cut off at the edge</text></svg>`;

describe('every SVG gracegate writes, laid out by Chromium', () => {
  let chromium: Chromium;
  let layouts: Layout[];
  const pictures = [...planPictures(), ...verifyPictures(), ...docsPictures(), { name: 'planted', svg: PLANTED }];

  before(async () => {
    chromium = await startChromium();
    layouts = await layoutOf(chromium.page, pictures);
  });
  after(async () => chromium?.close());

  test('the check finds a label on a label, a line through a label, and a label cut off', () => {
    const planted = layouts.find((l) => l.name === 'planted')!;
    assert.deepEqual(
      collisions(planted).map((c) => `${c.kind}: ${c.a} / ${c.b}`),
      ['label over label: first label / second label', 'line through label: crossed label / <line>'],
    );
    assert.deepEqual(
      outside(planted).map((b) => b.text),
      ['cut off at the edge'],
    );
  });

  test('every picture was laid out, with its labels and lines', () => {
    const names = layouts.map((l) => l.name);
    for (const want of ['docs/architecture.svg', ...PLAN_PICTURES.map((p) => p.file), 'verify --report --pod-state timeline.svg'])
      assert.ok(names.includes(want), want);
    assert.ok(names.filter((n) => n.startsWith('docs/e2e/')).length >= 20, 'the end-to-end timelines');
    assert.ok(names.filter((n) => n.startsWith('plan --format svg')).length >= 8, "every example gateway's plan");
    for (const l of layouts) assert.ok(l.texts.length > 3 && l.segments.length > 0, `${l.name}: ${l.texts.length} labels, ${l.segments.length} line segments`);
  });

  test('no label over another, no line through a label, nothing cut off', () => {
    const problems = layouts
      .filter((l) => l.name !== 'planted')
      .flatMap((l) => [
        ...collisions(l).map((c) => `${l.name}: ${c.kind}: "${c.a}" / ${c.b}`),
        ...outside(l).map((b) => `${l.name}: cut off at the edge: "${b.text}" (${Math.round(b.x0)}..${Math.round(b.x1)} of ${l.width})`),
      ]);
    assert.deepEqual(problems, []);
  });
});

describe("the README's PNG screenshots", () => {
  test('each is the screenshot of the SVG committed beside it, at the recorded scale (node dist/test/emit/plan-pictures-main.js takes them)', () => {
    const manifest = JSON.parse(readFileSync(picturePath(SCREENSHOTS), 'utf8')) as ScreenshotManifest;
    assert.deepEqual(
      manifest.pictures.map((p) => p.svg),
      PLAN_PICTURES.map((p) => p.file),
    );
    for (const p of manifest.pictures) {
      const svg = readFileSync(picturePath(p.svg), 'utf8');
      const png = readFileSync(picturePath(p.png));
      assert.equal(sha256(svg), p.svgSha256, `${p.png} was taken of another ${p.svg}: node dist/test/emit/plan-pictures-main.js`);
      assert.equal(sha256(png), p.pngSha256, `${p.png} is not the screenshot the manifest records`);
      const size = svgSize(svg);
      assert.deepEqual(pngSize(png), { width: Math.round(size.width * manifest.scale), height: Math.round(size.height * manifest.scale) }, p.png);
    }
  });
});

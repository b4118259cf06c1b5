/**
 * Where an SVG's labels and lines are as Chromium lays them out, and which of them collide: a label
 * over another label, or a line through a label. The boxes come from the live layout (getBBox of
 * every <text>, in the root's coordinates), the lines from every stroked <line>, <rect> edge,
 * <polyline>, <polygon> and <path> (sampled along its length), so the check sees the fonts and the
 * text widths a browser uses, not the estimates the emitters place labels with.
 */
import type { Page } from 'playwright-core';

export type Box = { text: string; x0: number; y0: number; x1: number; y1: number };
export type Segment = { what: string; x1: number; y1: number; x2: number; y2: number };
export type Layout = { name: string; width: number; height: number; texts: Box[]; segments: Segment[] };
export type Collision = { kind: 'label over label' | 'line through label'; a: string; b: string };

/**
 * What runs in the page, as plain JavaScript (the project compiles without the DOM's types): for
 * each root <svg> (in #svg-0, #svg-1, ...) its size, its labels' boxes and its stroked lines, in the
 * root's user coordinates.
 */
const MEASURE = `(count) => {
  const out = [];
  for (let i = 0; i < count; i++) {
    const root = document.querySelector('#svg-' + i + ' > svg');
    const toRoot = (el) => root.getScreenCTM().inverse().multiply(el.getScreenCTM());
    const point = (m, x, y) => new DOMPoint(x, y).matrixTransform(m);
    const texts = [];
    for (const t of root.querySelectorAll('text')) {
      const b = t.getBBox();
      if (b.width === 0 || b.height === 0) continue;
      const m = toRoot(t);
      const a = point(m, b.x, b.y);
      const c = point(m, b.x + b.width, b.y + b.height);
      // The visible text only: a <title> child is a tooltip, not drawn.
      const text = [...t.childNodes].filter((n) => n.nodeName !== 'title').map((n) => n.textContent).join('');
      texts.push({ text, x0: Math.min(a.x, c.x), y0: Math.min(a.y, c.y), x1: Math.max(a.x, c.x), y1: Math.max(a.y, c.y) });
    }
    const segments = [];
    const stroked = (el) => {
      const s = getComputedStyle(el);
      return s.stroke !== 'none' && s.stroke !== '' && parseFloat(s.strokeWidth) > 0 && s.visibility !== 'hidden' && s.display !== 'none';
    };
    const push = (what, m, pts, closed) => {
      const all = closed ? [...pts, pts[0]] : pts;
      for (let k = 1; k < all.length; k++) {
        const p = point(m, all[k - 1][0], all[k - 1][1]);
        const q = point(m, all[k][0], all[k][1]);
        segments.push({ what, x1: p.x, y1: p.y, x2: q.x, y2: q.y });
      }
    };
    for (const el of root.querySelectorAll('line, rect, polyline, polygon, path')) {
      if (!stroked(el)) continue;
      const m = toRoot(el);
      const title = el.querySelector('title');
      const what = '<' + el.tagName + '>' + (title && title.textContent ? ' (' + title.textContent + ')' : '');
      if (el.tagName === 'line') {
        push(what, m, [[el.x1.baseVal.value, el.y1.baseVal.value], [el.x2.baseVal.value, el.y2.baseVal.value]], false);
      } else if (el.tagName === 'rect') {
        const [x, y, w, h] = [el.x.baseVal.value, el.y.baseVal.value, el.width.baseVal.value, el.height.baseVal.value];
        push(what, m, [[x, y], [x + w, y], [x + w, y + h], [x, y + h]], true);
      } else {
        const length = el.getTotalLength();
        const n = Math.min(2000, Math.max(2, Math.ceil(length / 2)));
        const pts = [];
        for (let k = 0; k <= n; k++) {
          const p = el.getPointAtLength((length * k) / n);
          pts.push([p.x, p.y]);
        }
        push(what, m, pts, el.tagName === 'polygon');
      }
    }
    const view = root.viewBox.baseVal;
    out.push({ width: view && view.width ? view.width : root.width.baseVal.value, height: view && view.height ? view.height : root.height.baseVal.value, texts, segments });
  }
  return out;
}`;

/**
 * Lays out every SVG document in one page, side by side in the same DOM, and reads each one's
 * labels and lines. `svgs`: name and document text.
 */
export async function layoutOf(page: Page, svgs: ReadonlyArray<{ name: string; svg: string }>): Promise<Layout[]> {
  const body = svgs.map((s, i) => `<div id="svg-${i}">${s.svg.replace(/^<\?xml[^>]*>\s*/, '')}</div>`).join('\n');
  await page.setContent(`<!doctype html><html><body style="margin:0">${body}</body></html>`);
  const measured = (await page.evaluate(`(${MEASURE})(${svgs.length})`)) as Array<Omit<Layout, 'name'>>;
  return measured.map((m, i) => ({ name: svgs[i]!.name, ...m }));
}

/** How far two boxes must overlap, in px each way, to count: antialiasing and rounding stay below it. */
const SLACK = 0.5;

/** Whether a segment passes through the inside of a box (shrunk by SLACK): Liang-Barsky clipping. */
export function crosses(s: Segment, b: Box): boolean {
  const [x0, y0, x1, y1] = [b.x0 + SLACK, b.y0 + SLACK, b.x1 - SLACK, b.y1 - SLACK];
  if (x0 >= x1 || y0 >= y1) return false;
  const dx = s.x2 - s.x1;
  const dy = s.y2 - s.y1;
  let t0 = 0;
  let t1 = 1;
  for (const [p, q] of [
    [-dx, s.x1 - x0],
    [dx, x1 - s.x1],
    [-dy, s.y1 - y0],
    [dy, y1 - s.y1],
  ] as Array<[number, number]>) {
    if (p === 0) {
      if (q < 0) return false;
    } else {
      const r = q / p;
      if (p < 0) t0 = Math.max(t0, r);
      else t1 = Math.min(t1, r);
      if (t0 > t1) return false;
    }
  }
  return true;
}

export function overlaps(a: Box, b: Box): boolean {
  return Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0) > SLACK && Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0) > SLACK;
}

/** Every label over another label and every line through a label, in one layout. */
export function collisions(layout: Layout): Collision[] {
  const found: Collision[] = [];
  const { texts, segments } = layout;
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++)
      if (overlaps(texts[i]!, texts[j]!)) found.push({ kind: 'label over label', a: texts[i]!.text, b: texts[j]!.text });
    const through = new Set(segments.filter((s) => crosses(s, texts[i]!)).map((s) => s.what));
    for (const what of through) found.push({ kind: 'line through label', a: texts[i]!.text, b: what });
  }
  return found;
}

/** Labels drawn (partly) outside the picture: cut off where the document ends. */
export function outside(layout: Layout): Box[] {
  return layout.texts.filter((t) => t.x0 < -SLACK || t.y0 < -SLACK || t.x1 > layout.width + SLACK || t.y1 > layout.height + SLACK);
}

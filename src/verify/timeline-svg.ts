/**
 * `gracegate verify --report DIR`'s timeline.svg: requests over time (stacked columns of the
 * requests that started in each slice, coloured by outcome), and the termination's moments as
 * vertical lines: the termination command's start (0) and exit, the --observe command's exit.
 * With --pod-state, each pod's six events as the sidecar reported them (its [5] and [6] are the
 * sidecar's estimates, dashed): a labelled vertical line each, in the pod's colour.
 */
import { el, svgDocument, type SvgNode } from '../emit/svg';
import { placeMarkLabels } from '../emit/svg-labels';
import { terminationEvent } from '../contract/hc';
import type { VerifyReport } from './report';

const W = 900;
const LEFT = 60;
const RIGHT = 20;
/** Where the band of the marks' labels starts, under the title. */
const BAND = 32;
const ROW = 14;
const PLOT_H = 220;

/** Colours by outcome: ok green, the kinds of failure each their own. */
export function outcomeColour(kind: string): string {
  if (kind === 'ok') return '#4caf50';
  if (kind === 'refused') return '#9c27b0';
  if (kind === 'reset') return '#e53935';
  if (kind === 'truncated') return '#ff9800';
  if (kind === 'timeout') return '#795548';
  if (kind.startsWith('http-5')) return '#1e88e5';
  return '#607d8b';
}

export function renderVerifySvg(r: VerifyReport): string {
  const t0 = r.loadStartMs;
  const span = Math.max(1, r.loadEndMs - t0);
  const plotW = W - LEFT - RIGHT;
  const x = (ms: number): number => LEFT + ((ms - t0) / span) * plotW;
  const { sliceMs, counts } = r.timeline;
  const kinds = ['ok', ...Object.keys(r.failuresByKind).sort()];
  const total = (c: Record<string, number>): number => Object.values(c).reduce((a, b) => a + b, 0);
  const max = Math.max(1, ...counts.map(total));

  // The marks: the commands' moments, then each pod's events within the plotted span (the text and
  // the JSON have them all). Their labels sit in a band over the plot, each line running from its
  // label down through the plot, and no label over a line (src/emit/svg-labels.ts).
  type Mark = { at: number; label: string; colour: string; dashed?: string; title?: string };
  const marks: Mark[] = [];
  const commands: Array<[string, number | null | undefined]> = [
    ['termination command starts', r.terminate ? 0 : null],
    [`termination command exits (${r.terminate?.code ?? r.terminate?.signal ?? '-'})`, r.terminate?.endMs],
    ['--observe command exits', r.observe?.endMs],
  ];
  for (const [label, at] of commands) if (at !== null && at !== undefined) marks.push({ at, label, colour: '#000', dashed: '4 3' });
  const podColours = ['#c62828', '#283593', '#00695c', '#6a1b9a', '#ef6c00'];
  (r.podStates ?? []).forEach((pod, p) => {
    for (const e of pod.events) {
      if (e.atMs === null || e.atMs < t0 || e.atMs > r.loadEndMs) continue;
      const label = `[${e.id}] ${e.name} (${pod.pod})`;
      marks.push({
        at: e.atMs,
        label,
        colour: podColours[p % podColours.length]!,
        ...(terminationEvent(e.id).estimated ? { dashed: '2 2' } : {}),
        title: `${label} at ${(e.atMs / 1000).toFixed(3)} s${e.note ? `: ${e.note}` : ''}`,
      });
    }
  });
  const placed = placeMarkLabels(
    marks.map((m) => ({ x: x(m.at), label: m.label })),
    'down',
    W - 4,
  );
  const bandRows = Math.max(0, ...placed.map((p) => p.row + 1));
  const top = BAND + bandRows * ROW + 8;
  const y = (n: number): number => top + PLOT_H - (n / max) * PLOT_H;
  const height = top + PLOT_H + 74;

  const nodes: SvgNode[] = [
    el('text', { x: LEFT, y: 20, 'font-size': 13 }, `gracegate verify: ${r.requests} requests to ${r.url}, ${r.failures} failed (${r.verdict.status})`),
    el('line', { x1: LEFT, y1: top + PLOT_H, x2: W - RIGHT, y2: top + PLOT_H, stroke: '#333' }),
    el('line', { x1: LEFT, y1: top, x2: LEFT, y2: top + PLOT_H, stroke: '#333' }),
    el('text', { x: LEFT - 4, y: top + 10, 'text-anchor': 'end' }, String(max)),
    el('text', { x: LEFT - 4, y: top + PLOT_H, 'text-anchor': 'end' }, '0'),
    el(
      'text',
      { x: LEFT, y: top + PLOT_H + 30 },
      `requests started per ${(sliceMs / 1000).toFixed(2)} s, by outcome; seconds after the termination command started`,
    ),
  ];
  for (let s = Math.ceil(t0 / 1000) * 1000, step = Math.max(1000, Math.ceil(span / 10 / 1000) * 1000); s <= r.loadEndMs; s += step) {
    nodes.push(el('text', { x: x(s), y: top + PLOT_H + 14, 'text-anchor': 'middle' }, `${s / 1000}`));
  }
  counts.forEach((c, i) => {
    let base = 0;
    for (const k of kinds) {
      const n = c[k] ?? 0;
      if (n === 0) continue;
      nodes.push(
        el(
          'rect',
          { x: x(t0 + i * sliceMs), y: y(base + n), width: Math.max(1, plotW / counts.length - 1), height: y(base) - y(base + n), fill: outcomeColour(k) },
          el('title', {}, `${n} ${k}`),
        ),
      );
      base += n;
    }
  });
  marks.forEach((m, i) => {
    const { row, anchor, text } = placed[i]!;
    const baseline = BAND + 10 + row * ROW;
    nodes.push(
      el(
        'line',
        { x1: x(m.at), y1: baseline - 4, x2: x(m.at), y2: top + PLOT_H, stroke: m.colour, ...(m.dashed ? { 'stroke-dasharray': m.dashed } : {}) },
        ...(m.title ? [el('title', {}, m.title)] : []),
      ),
    );
    nodes.push(
      el(
        'text',
        { x: anchor === 'end' ? x(m.at) - 3 : x(m.at) + 3, y: baseline, fill: m.colour, 'text-anchor': anchor === 'end' ? 'end' : undefined },
        text,
        ...(text === m.label ? [] : [el('title', {}, m.label)]),
      ),
    );
  });
  kinds.forEach((k, i) => {
    const n = k === 'ok' ? r.ok : (r.failuresByKind[k] ?? 0);
    nodes.push(el('rect', { x: LEFT + i * 130, y: height - 30, width: 12, height: 12, fill: outcomeColour(k) }));
    nodes.push(el('text', { x: LEFT + i * 130 + 16, y: height - 20 }, `${k}: ${n}`));
  });
  return svgDocument(W, height, `gracegate verify timeline: ${r.url}`, nodes);
}

/** One SVG timeline per run: the six events and the in-flight curves over time. */
import { labelWidth, placeMarkLabels } from '../../../src/emit/svg-labels';
import type { MeasuredEvent, ScenarioResult } from './result';

function failuresText(r: Pick<ScenarioResult, 'failures' | 'failureTotal'>): string {
  const kinds = Object.entries(r.failures);
  return kinds.length === 0 ? '0' : `${r.failureTotal} (${kinds.map(([k, n]) => `${n} ${k}`).join(', ')})`;
}

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const EVENT_COLOURS: Record<number, string> = { 1: '#d62728', 2: '#9467bd', 3: '#1f77b4', 4: '#2ca02c', 5: '#ff7f0e', 6: '#8c564b' };

/** Words of `text` in lines of at most `width` px (estimated as the labels are). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines.at(-1);
    if (last !== undefined && labelWidth(`${last} ${word}`) <= width) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}

/**
 * A timeline: the six events as labelled vertical lines at their measured times, and two in-flight
 * curves (all clients; the leaving pod's active requests) over the same time axis. The events'
 * labels sit in a band over the plot, each line running from its label down to the axis, with no
 * label over a line (src/emit/svg-labels.ts); the legend has a line of its own.
 */
export type TimelineInput = Pick<
  ScenarioResult,
  | 'scenario'
  | 'sequence'
  | 'lbSetting'
  | 'proxy'
  | 'requests'
  | 'failures'
  | 'failureTotal'
  | 'lb'
  | 'lbCounters'
  | 'events'
  | 'clientInFlight'
  | 'podInFlight'
  | 'terminationMs'
  | 'loadStartMs'
  | 'loadEndMs'
>;

export function timelineSvg(r: TimelineInput): string {
  const W = 900;
  const left = 60;
  const right = 20;
  const row = 14;
  const plotH = 200;
  const times = [r.loadStartMs, r.loadEndMs, 0, r.terminationMs, ...r.events.map((e) => e.atMs ?? 0)];
  const t0 = Math.min(...times);
  const t1 = Math.max(...times) + 200;
  const x = (ms: number): number => left + ((ms - t0) / (t1 - t0)) * (W - left - right);
  const happened = r.events.filter((e): e is MeasuredEvent & { atMs: number } => e.atMs !== null);
  const labels = happened.map((e) => `[${e.id}] ${e.name} ${(e.atMs / 1000).toFixed(2)}s (${e.source})`);
  const placed = placeMarkLabels(
    happened.map((e, i) => ({ x: x(e.atMs), label: labels[i]! })),
    'down',
    W - 4,
  );
  const subtitle = wrap(
    `${r.requests} requests, client failures ${failuresText(r)}; ${r.proxy} pods behind ${r.lb}: LB conn errors ${r.lbCounters.econ}, retries ${r.lbCounters.wretr}, redispatches ${r.lbCounters.wredis}`,
    W - left - right,
  );
  const legendY = 32 + subtitle.length * row;
  const bandTop = legendY + 6;
  const top = bandTop + Math.max(1, ...placed.map((p) => p.row + 1)) * row + 6;
  const missing = r.events.filter((e) => e.atMs === null);
  const missingLines =
    missing.length > 0 ? wrap(`did not happen: ${missing.map((e) => `[${e.id}] ${e.name}${e.note ? ` (${e.note})` : ''}`).join('; ')}`, W - left - right) : [];
  const H = top + plotH + 44 + missingLines.length * row;
  const maxY = Math.max(1, ...r.clientInFlight.map((p) => p[1]), ...r.podInFlight.map((p) => p[1]));
  const y = (v: number): number => top + plotH - (v / maxY) * plotH;
  const path = (pts: Array<[number, number]>): string => pts.map(([t, v], i) => `${i === 0 ? 'M' : 'L'}${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${left}" y="18" font-size="13" font-weight="bold">${esc(`${r.scenario}: ${r.sequence} — ${r.lbSetting} — ${r.proxy}`)}</text>`);
  subtitle.forEach((line, i) => out.push(`<text x="${left}" y="${32 + i * row}">${esc(line)}</text>`));
  out.push(
    `<text x="${left}" y="${legendY}"><tspan fill="#555">— clients in flight</tspan>  <tspan fill="#1f77b4">— leaving pod, active requests</tspan></text>`,
  );
  // axes
  out.push(`<line x1="${left}" y1="${top + plotH}" x2="${W - right}" y2="${top + plotH}" stroke="#333"/>`);
  out.push(`<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotH}" stroke="#333"/>`);
  const step = t1 - t0 > 8000 ? 2000 : t1 - t0 > 3000 ? 1000 : 500;
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
    out.push(`<line x1="${x(t).toFixed(1)}" y1="${top + plotH}" x2="${x(t).toFixed(1)}" y2="${top + plotH + 4}" stroke="#333"/>`);
    out.push(`<text x="${x(t).toFixed(1)}" y="${top + plotH + 16}" text-anchor="middle">${(t / 1000).toFixed(1)}s</text>`);
  }
  out.push(`<text x="${W - right}" y="${top + plotH + 30}" text-anchor="end">seconds after the termination started</text>`);
  out.push(`<text x="${left - 6}" y="${y(maxY) + 4}" text-anchor="end">${maxY}</text><text x="${left - 6}" y="${y(0) - 2}" text-anchor="end">0</text>`);
  // curves
  if (r.clientInFlight.length > 0) out.push(`<path d="${path(r.clientInFlight)}" fill="none" stroke="#555" stroke-width="1.5"/>`);
  if (r.podInFlight.length > 0) out.push(`<path d="${path(r.podInFlight)}" fill="none" stroke="#1f77b4" stroke-width="2"/>`);
  // events: a line from its label down through the plot
  happened.forEach((e, i) => {
    const ex = x(e.atMs);
    const c = EVENT_COLOURS[e.id]!;
    const { row: at, anchor } = placed[i]!;
    const baseline = bandTop + 10 + at * row;
    out.push(`<line x1="${ex.toFixed(1)}" y1="${baseline - 4}" x2="${ex.toFixed(1)}" y2="${top + plotH}" stroke="${c}" stroke-dasharray="4,3"/>`);
    out.push(
      `<text x="${(anchor === 'end' ? ex - 3 : ex + 3).toFixed(1)}" y="${baseline}" fill="${c}"${anchor === 'end' ? ' text-anchor="end"' : ''}>${esc(placed[i]!.text)}${placed[i]!.text === labels[i] ? '' : `<title>${esc(labels[i]!)}</title>`}</text>`,
    );
  });
  missingLines.forEach((line, i) => {
    out.push(`<text x="${left}" y="${top + plotH + 48 + i * row}" fill="#777">${esc(line)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

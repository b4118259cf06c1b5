/** One SVG timeline per run: the six events and the in-flight curves over time. */
import type { MeasuredEvent, ScenarioResult } from './result';

function failuresText(r: ScenarioResult): string {
  const kinds = Object.entries(r.failures);
  return kinds.length === 0 ? '0' : `${r.failureTotal} (${kinds.map(([k, n]) => `${n} ${k}`).join(', ')})`;
}

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const EVENT_COLOURS: Record<number, string> = { 1: '#d62728', 2: '#9467bd', 3: '#1f77b4', 4: '#2ca02c', 5: '#ff7f0e', 6: '#8c564b' };

/**
 * A timeline: the six events as labelled vertical lines at their measured times, and two in-flight
 * curves (all clients; the leaving pod's active requests) over the same time axis.
 */
export function timelineSvg(r: ScenarioResult): string {
  const W = 900;
  const H = 420;
  const left = 60;
  const right = 20;
  const top = 40;
  const plotH = 200;
  const lanesTop = top + plotH + 40;
  const times = [r.loadStartMs, r.loadEndMs, 0, r.terminationMs, ...r.events.map((e) => e.atMs ?? 0)];
  const t0 = Math.min(...times);
  const t1 = Math.max(...times) + 200;
  const x = (ms: number): number => left + ((ms - t0) / (t1 - t0)) * (W - left - right);
  const maxY = Math.max(1, ...r.clientInFlight.map((p) => p[1]), ...r.podInFlight.map((p) => p[1]));
  const y = (v: number): number => top + plotH - (v / maxY) * plotH;
  const path = (pts: Array<[number, number]>): string => pts.map(([t, v], i) => `${i === 0 ? 'M' : 'L'}${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${left}" y="18" font-size="13" font-weight="bold">${esc(`${r.scenario}: ${r.sequence} — ${r.lbSetting} — ${r.proxy}`)}</text>`);
  out.push(
    `<text x="${left}" y="32">${esc(`${r.requests} requests, client failures ${failuresText(r)}; ${r.proxy} pods behind ${r.lb}: LB conn errors ${r.lbCounters.econ}, retries ${r.lbCounters.wretr}, redispatches ${r.lbCounters.wredis}`)}</text>`,
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
  out.push(`<text x="${left - 6}" y="${y(maxY) + 4}" text-anchor="end">${maxY}</text><text x="${left - 6}" y="${y(0) + 4}" text-anchor="end">0</text>`);
  // curves
  if (r.clientInFlight.length > 0) out.push(`<path d="${path(r.clientInFlight)}" fill="none" stroke="#555" stroke-width="1.5"/>`);
  if (r.podInFlight.length > 0) out.push(`<path d="${path(r.podInFlight)}" fill="none" stroke="#1f77b4" stroke-width="2"/>`);
  out.push(
    `<text x="${W - right}" y="${top + 10}" text-anchor="end"><tspan fill="#555">— clients in flight</tspan>  <tspan fill="#1f77b4">— leaving pod, active requests</tspan></text>`,
  );
  // events: a vertical line through the plot and a labelled lane below
  const happened = r.events.filter((e): e is MeasuredEvent & { atMs: number } => e.atMs !== null);
  happened.forEach((e, i) => {
    const ex = x(e.atMs).toFixed(1);
    const c = EVENT_COLOURS[e.id]!;
    out.push(`<line x1="${ex}" y1="${top}" x2="${ex}" y2="${lanesTop + 6 + i * 16}" stroke="${c}" stroke-dasharray="4,3"/>`);
    out.push(
      `<text x="${ex}" y="${lanesTop + 10 + i * 16}" fill="${c}" dx="3">${esc(`[${e.id}] ${e.name} ${(e.atMs / 1000).toFixed(2)}s (${e.source})`)}</text>`,
    );
  });
  const missing = r.events.filter((e) => e.atMs === null);
  if (missing.length > 0) {
    out.push(
      `<text x="${left}" y="${H - 8}" fill="#777">${esc(`did not happen: ${missing.map((e) => `[${e.id}] ${e.name}${e.note ? ` (${e.note})` : ''}`).join('; ')}`)}</text>`,
    );
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
